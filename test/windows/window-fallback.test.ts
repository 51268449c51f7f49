import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractWindows, type ExtractOptions, type FitCheck, type WindowRequest } from '../../src/windows/extract.ts';
import { smallerKinds, WindowPolicySchema, windowPolicyDigest, type WindowPolicy } from '../../src/windows/policy.ts';
import { agentRun } from './builders.ts';

const policy = (config: Record<string, unknown> = {}): WindowPolicy => WindowPolicySchema.parse({ config });
const FALLBACK: ExtractOptions = { fallback: true };

function extract(requests: WindowRequest[], p: WindowPolicy, options: ExtractOptions = FALLBACK, t = agentRun(4)) {
  return extractWindows(t, requests, p, windowPolicyDigest(p), options);
}

/** The agent step (index 0) of `agentRun(4)`: its agent and turn windows hold 5 events, its event window 1 + context. */
const AT_AGENT: WindowRequest = { kind: 'agent', anchorIndex: 0, triggers: ['sampled'] };

describe('windows that fit: the fallback to smaller kinds (windowPolicy.config.fallback)', () => {
  it('a window over its caps is built again as each smaller kind at the same anchor until one fits, and each kind tried says what came of it', () => {
    const x = extract([AT_AGENT], policy({ maxEventsPerWindow: 3, eventContextSteps: 1 }));
    expect(x.windows.map((w) => [w.kind, w.events.length, w.triggers])).toEqual([['event', 2, ['sampled']]]);
    expect(x.refusals.map((r) => [r.kind, r.reason, r.detail])).toEqual([
      ['agent', 'events-per-window', '5 events, cap 3; judged as the event window at this anchor instead'],
      ['turn', 'events-per-window', '5 events, cap 3; judged as the event window at this anchor instead'],
    ]);
    expect(x.fellBack.get(x.windows[0]!.id)).toBe('judged as event: the agent window did not fit (events-per-window: 5 events, cap 3)');
    // Never truncated: the event window is the one the policy builds for an event request.
    const asEvent = extract([{ ...AT_AGENT, kind: 'event' }], policy({ maxEventsPerWindow: 3, eventContextSteps: 1 }));
    expect(asEvent.windows).toEqual(x.windows);
  });

  it('which kinds are tried, and in which order, is the config: [] refuses at once, a kind left out is skipped, kinds not built are not tried', () => {
    const capped = { maxEventsPerWindow: 3, eventContextSteps: 1 };
    const none = extract([AT_AGENT], policy({ ...capped, fallback: [] }));
    expect(none.windows).toEqual([]);
    expect(none.refusals.map((r) => [r.kind, r.reason, r.detail])).toEqual([['agent', 'events-per-window', '5 events, cap 3']]);
    const skipTurn = extract([AT_AGENT], policy({ ...capped, fallback: ['agent', 'event'] }));
    expect(skipTurn.refusals.map((r) => r.kind)).toEqual(['agent']);
    expect(skipTurn.windows.map((w) => w.kind)).toEqual(['event']);
    const eventOff = extract([AT_AGENT], policy({ ...capped, kinds: ['agent', 'turn'] }));
    expect(eventOff.windows).toEqual([]);
    expect(eventOff.refusals.map((r) => r.kind)).toEqual(['agent', 'turn']);
    expect(eventOff.refusals[1]!.detail).toBe('5 events, cap 3; no kind of windowPolicy.config.fallback fits (tried agent, turn)');
    expect(smallerKinds(policy(), 'agent')).toEqual(['turn', 'event']);
    expect(smallerKinds(policy(), 'event')).toEqual([]);
    expect(smallerKinds(policy({ fallback: ['turn', 'agent', 'event'] }), 'agent')).toEqual(['event']);
    expect(WindowPolicySchema.safeParse({ config: { fallback: ['turn', 'turn'] } }).error?.issues[0]).toMatchObject({
      path: ['config', 'fallback'],
      message: 'lists a kind twice',
    });
  });

  it('without the fallback asked for (the walk, which walks kinds itself), a window over its caps is refused as before', () => {
    const x = extract([AT_AGENT], policy({ maxEventsPerWindow: 3 }), {});
    expect(x.windows).toEqual([]);
    expect(x.refusals.map((r) => [r.kind, r.reason])).toEqual([['agent', 'events-per-window']]);
    expect(x.fellBack.size).toBe(0);
  });

  it("the caller's fit check (the model's context) falls back the same way, and a built window refused by it keeps its id", () => {
    const overContext: FitCheck = (w) => (w.events.length > 2 ? { reason: 'context-tokens', detail: `${w.events.length} events over the context` } : null);
    const p = policy({ eventContextSteps: 1 });
    const x = extract([AT_AGENT], p, { fallback: true, fits: overContext });
    expect(x.windows.map((w) => w.kind)).toEqual(['event']);
    expect(x.refusals.map((r) => [r.kind, r.reason])).toEqual([
      ['agent', 'context-tokens'],
      ['turn', 'context-tokens'],
    ]);
    const built = extract([AT_AGENT], p, {}).windows[0]!;
    expect(x.refusals[0]!.windowId).toBe(built.id);
    expect(x.fellBack.get(x.windows[0]!.id)).toBe('judged as event: the agent window did not fit (context-tokens: 5 events over the context)');
    const nothing = extract([AT_AGENT], p, { fallback: true, fits: () => ({ reason: 'context-tokens', detail: 'too big' }) });
    expect(nothing.windows).toEqual([]);
    expect(nothing.refusals.map((r) => r.detail)).toEqual([
      'too big; no kind of windowPolicy.config.fallback fits (tried agent, turn, event)',
      'too big; no kind of windowPolicy.config.fallback fits (tried agent, turn, event)',
      'too big; no kind of windowPolicy.config.fallback fits (tried agent, turn, event)',
    ]);
  });

  it('stops at a kind the trajectory asks for at that anchor on its own: no window is built twice', () => {
    const x = extract(
      [
        { kind: 'turn', anchorIndex: 4, triggers: ['terminal'] },
        { kind: 'event', anchorIndex: 4, triggers: ['outbound'] },
      ],
      policy({ maxEventsPerWindow: 3, eventContextSteps: 1 }),
    );
    expect(x.windows.map((w) => [w.kind, w.triggers])).toEqual([['event', ['outbound']]]);
    expect(x.refusals.map((r) => [r.kind, r.detail])).toEqual([['turn', '5 events, cap 3; the event window at this anchor is asked for on its own']]);
    expect(x.fellBack.size).toBe(0);
  });

  it('the fallback is not part of the policy digest: window ids, ledger keys and certificates stand when it changes', () => {
    expect(windowPolicyDigest(policy({ fallback: [] }))).toBe(windowPolicyDigest(policy()));
    expect(windowPolicyDigest(policy({ kinds: ['event'] }))).not.toBe(windowPolicyDigest(policy()));
  });

  it('property: every window is within its caps, at most one per request, ids unique; every request is judged or refused', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 4 }), (n, cap, ctx) => {
        const t = agentRun(n);
        const p = policy({ maxEventsPerWindow: cap, eventContextSteps: ctx, maxWindowsPerTrajectory: 1000 });
        const requests: WindowRequest[] = t.steps.flatMap((_, i) =>
          (['agent', 'turn', 'event'] as const).map((kind) => ({ kind, anchorIndex: i, triggers: ['sampled' as const] })),
        );
        const x = extract(requests, p, FALLBACK, t);
        for (const w of x.windows) expect(w.events.length).toBeLessThanOrEqual(cap);
        expect(new Set(x.windows.map((w) => w.id)).size).toBe(x.windows.length);
        expect(x.windows.length).toBeLessThanOrEqual(requests.length);
        const refusedKeys = new Set(x.refusals.map((r) => `${r.kind}:${r.anchor}`));
        for (const r of requests) {
          const step = t.steps[r.anchorIndex]!;
          const key = `${r.kind}:${step.traceId}/${step.id}`;
          expect(refusedKeys.has(key) || x.windows.some((w) => `${w.kind}:${w.anchor}` === key)).toBe(true);
        }
      }),
    );
  });
});
