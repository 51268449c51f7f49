import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { JudgeConfigSchema } from '../../src/judge/config.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import { at, toolArgs, traj } from '../windows/builders.ts';
import { type ScriptedServer, startScriptedServer } from './scripted-chat-server.ts';

// The scripted server stands in for the judge's model endpoint (no LLM runs here); it never answers.

const CHECKS = checksConfigSchema.parse({});
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Three outbound sends: three event windows, plus the terminal turn window. */
function sends() {
  const root = at(1, { kind: 'agent', name: 'invoke_agent', agentName: 'mailer', endTimeUnixNano: at(50).startTimeUnixNano });
  return traj([
    root,
    ...[2, 3, 4].map((n) => at(n, { parentId: root.id, toolName: 'send_email', args: toolArgs(`{"to":"u${n}@example.com"}`), result: 'sent' })),
  ]);
}

describe('DecisionPoints.consider: each window’s fate, settled', () => {
  it('returns a value at once when the judge is disabled, and a promise when windows are queued that close() settles: cancelled call judged, queued ones deferred (shutdown)', async () => {
    const off = await DecisionPoints.open(await mkdtemp(join(tmpdir(), 'trajwatch-c-')), JudgeConfigSchema.parse({}), { onFindings: () => {} });
    const t = sends();
    expect(off.consider(t, runChecks(t, CHECKS), [])).toEqual({ judge: 'disabled', windows: [] });

    server = await startScriptedServer(() => ({ hang: true }));
    const cfg = JudgeConfigSchema.parse({
      enabled: true,
      client: { baseUrl: server.baseUrl, model: 'm', apiKeyEnv: null, retries: 0, timeoutMs: 60_000 },
      sampling: { rate: 0 },
      budget: { maxConcurrent: 1 },
    });
    const handed: string[] = [];
    const dp = await DecisionPoints.open(await mkdtemp(join(tmpdir(), 'trajwatch-c-')), cfg, {
      checks: CHECKS,
      onFindings: (f) => handed.push(...f.map((x) => x.finding_id)),
      onError: () => undefined,
    });
    const outcome = dp.consider(t, runChecks(t, CHECKS), []);
    expect(outcome).toBeInstanceOf(Promise);
    let settled = false;
    void (outcome as Promise<unknown>).then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(settled).toBe(false);
    await dp.close();
    const part = await outcome;
    const fates = part.windows.map((w) => `${w.fate}:${w.reason}`);
    expect(fates.filter((f) => f === 'judged:cancelled')).toHaveLength(1);
    expect(fates.filter((f) => f === 'deferred:shutdown').length).toBeGreaterThanOrEqual(2);
    expect(fates.filter((f) => f !== 'judged:cancelled' && f !== 'deferred:shutdown')).toEqual(['not-sampled:rate']);
    // The judged window names exactly the findings handed on for it.
    expect(part.windows.find((w) => w.fate === 'judged')!.finding_ids.sort()).toEqual(handed.sort());
  });
});
