import { afterEach, describe, expect, it } from 'vitest';
import { runChecks } from '../../src/checks/run-checks.ts';
import { toolRoles } from '../../src/checks/tool-roles.ts';
import { JudgeConfigSchema, type JudgeConfig } from '../../src/judge/config.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import { fitWindows } from '../../src/judge/window-fit.ts';
import { windowRequests } from '../../src/windows/extract.ts';
import { windowPolicyDigest } from '../../src/windows/policy.ts';
import { CHECKS, deployRun, harness, type Harness } from './judge-harness.ts';
import { answers, completion } from './scripted-chat-server.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint, which cannot run here.

const started: Harness[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((h) => h.server.close()));
});

const t = deployRun();
/** Event windows of one step; the terminal turn window holds all five. */
const SMALL_EVENTS = { windowPolicy: { config: { eventContextSteps: 0 } }, sampling: { rate: 0 } };

function requestsOf(cfg: JudgeConfig) {
  const digest = windowPolicyDigest(cfg.windowPolicy);
  return { digest, requests: windowRequests(t, runChecks(t, CHECKS), toolRoles(t, CHECKS).outbound, cfg.sampling, digest) };
}

/** The prompt-token estimate of each window's request as fitWindows builds it, by kind and anchor. */
function estimates(cfg: JudgeConfig): Map<string, number> {
  const { digest, requests } = requestsOf(cfg);
  const open = { ...cfg, client: { ...cfg.client, contextTokens: null } };
  return new Map(fitWindows(t, requests, open, digest).windows.map((f) => [`${f.window.kind}@${f.window.anchor}`, Math.ceil(f.bytes / 4)]));
}

describe("windows that fit the model's context (client.contextTokens)", () => {
  it('a turn window over the context is judged as the event window at its anchor; the refusal names its estimate and the context, the judged fate why', async () => {
    const h = await harness(() => ({ body: completion(answers()) }), {}, SMALL_EVENTS);
    started.push(h);
    const sizes = estimates(h.cfg);
    const turn = [...sizes].find(([k]) => k.startsWith('turn@'))!;
    const biggestEvent = Math.max(...[...sizes].filter(([k]) => k.startsWith('event@')).map(([, n]) => n));
    expect(turn[1]).toBeGreaterThan(biggestEvent + 64);
    const contextTokens = biggestEvent + h.cfg.client.maxOutputTokens + 32;
    const cfg = JudgeConfigSchema.parse({ ...SMALL_EVENTS, enabled: true, client: { ...h.cfg.client, contextTokens } });

    const dp = await DecisionPoints.open(h.dataDir, cfg, { checks: CHECKS, onFindings: () => undefined });
    const part = await dp.consider(t, runChecks(t, CHECKS), []);
    await dp.drain();
    const stats = dp.stats();
    await dp.close();
    const anchor = turn[0].slice('turn@'.length);
    const fates = part.windows.filter((w) => w.anchor === anchor && w.fate !== 'not-sampled');
    expect(fates.map((w) => [w.kind, w.fate, w.reason])).toEqual([
      ['turn', 'refused', 'context-tokens'],
      ['event', 'judged', undefined],
    ]);
    expect(fates[0]!.detail).toMatch(
      new RegExp(
        `^~${turn[1]} prompt tokens estimated \\(\\d+ bytes / 4\\) \\+ 256 completion tokens, over the ${contextTokens}-token context of judge; judged as the event window at this anchor instead$`,
      ),
    );
    expect(fates[1]!.detail).toMatch(/^judged as event: the turn window did not fit \(context-tokens: ~\d+ prompt tokens estimated/);
    expect(stats.refused).toEqual({ 'context-tokens': 1 });
    expect(h.server.requests).toHaveLength(part.windows.filter((w) => w.fate === 'judged').length);
    expect(part.windows.filter((w) => w.fate === 'judged').map((w) => w.kind)).toEqual(['event', 'event', 'event']);
  });

  it('with windowPolicy.config.fallback [] the same turn window is refused, and nothing stands in for it', async () => {
    const h = await harness(() => ({ body: completion(answers()) }), {}, SMALL_EVENTS);
    started.push(h);
    const sizes = estimates(h.cfg);
    const biggestEvent = Math.max(...[...sizes].filter(([k]) => k.startsWith('event@')).map(([, n]) => n));
    const cfg = JudgeConfigSchema.parse({
      ...SMALL_EVENTS,
      windowPolicy: { config: { eventContextSteps: 0, fallback: [] } },
      enabled: true,
      client: { ...h.cfg.client, contextTokens: biggestEvent + h.cfg.client.maxOutputTokens + 32 },
    });
    const { digest, requests } = requestsOf(cfg);
    const fitted = fitWindows(t, requests, cfg, digest);
    expect(fitted.windows.map((f) => f.window.kind)).toEqual(['event', 'event']);
    expect(fitted.windows.every((f) => f.fellBack === undefined)).toBe(true);
    expect(fitted.refusals.map((r) => [r.kind, r.reason])).toEqual([['turn', 'context-tokens']]);
    expect(fitted.refusals[0]!.detail).not.toContain('judged as');
  });
});
