import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckResults } from '../../src/checks/check-result.ts';
import { canonicalJson } from '../../src/core/canonical-json.ts';
import { extractWindows, windowRequests, type WindowRequest } from '../../src/windows/extract.ts';
import { WindowPolicySchema, windowPolicyDigest, type WindowPolicy } from '../../src/windows/policy.ts';
import { SamplingSchema } from '../../src/windows/sampling.ts';
import { UNRESOLVED_EVENT_ID } from '../../src/windows/window.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import { makeSpan } from '../normalize/make-span.ts';
import { agentRun, at, NO_CHECKS, traj, TRACE } from './builders.ts';

const policy = (config: Partial<WindowPolicy['config']> = {}): WindowPolicy => WindowPolicySchema.parse({ config });
const noSample = SamplingSchema.parse({ rate: 0 });

function extract(t = agentRun(5), requests: WindowRequest[], p = policy()) {
  return extractWindows(t, requests, p, windowPolicyDigest(p));
}

describe('window extraction', () => {
  it('builds an event window of the anchor and its context, events e1.. with span refs', () => {
    const { windows, refusals } = extract(agentRun(6), [{ kind: 'event', anchorIndex: 3, triggers: ['outbound'] }], policy({ eventContextSteps: 1 }));
    expect(refusals).toEqual([]);
    const w = windows[0]!;
    expect(w.kind).toBe('event');
    expect(w.events.map((e) => e.id)).toEqual(['e1', 'e2', 'e3']);
    expect(w.events[1]!.evidenceRefs).toEqual([{ kind: 'span', uri: `span:${TRACE}/0000000000000004` }]);
    expect(JSON.parse(w.events[1]!.content)).toMatchObject({ step: 'tool', tool: 'lookup', args: { q: 2 }, result: 'result 2' });
    expect(w.id).toMatch(/^w1_[0-9a-f]{24}$/);
    expect(w.subject).toEqual({ trajectoryKey: 'session-1', revision: 1, agent: 'worker' });
  });

  it('builds an agent window of the whole subtree and a turn window of the trace', () => {
    const t = agentRun(4);
    const { windows } = extract(t, [
      { kind: 'agent', anchorIndex: 2, triggers: ['sampled'] },
      { kind: 'turn', anchorIndex: 4, triggers: ['terminal'] },
    ]);
    expect(windows.map((w) => [w.kind, w.events.length])).toEqual([
      ['agent', 5],
      ['turn', 5],
    ]);
    expect(windows[1]!.limitations).toContain('turn-boundaries-not-captured');
  });

  it('never uses the reserved id "unresolved" and keeps ids unique', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 0, max: 5 }), (n, ctx) => {
        const t = agentRun(n);
        const reqs: WindowRequest[] = t.steps.map((_, i) => ({ kind: 'event', anchorIndex: i, triggers: ['sampled'] }));
        const { windows } = extract(t, reqs, policy({ eventContextSteps: ctx, maxWindowsPerTrajectory: 1000, maxEventsPerWindow: 1000 }));
        for (const w of windows) {
          const ids = w.events.map((e) => e.id);
          expect(new Set(ids).size).toBe(ids.length);
          expect(ids).not.toContain(UNRESOLVED_EVENT_ID);
          expect(w.events.length).toBeGreaterThan(0);
        }
      }),
    );
  });

  it('is pure: the same input gives byte-identical windows', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.string(), (n, text) => {
        const t = agentRun(n, () => text);
        const reqs: WindowRequest[] = [{ kind: 'agent', anchorIndex: 0, triggers: ['sampled'] }];
        expect(canonicalJson(extract(t, reqs))).toBe(
          canonicalJson(
            extract(
              agentRun(n, () => text),
              reqs,
            ),
          ),
        );
      }),
    );
  });

  describe('caps refuse and record, never truncate', () => {
    it('refuses a window with more events than maxEventsPerWindow', () => {
      const { windows, refusals } = extract(agentRun(10), [{ kind: 'agent', anchorIndex: 0, triggers: ['sampled'] }], policy({ maxEventsPerWindow: 5 }));
      expect(windows).toEqual([]);
      expect(refusals).toEqual([
        expect.objectContaining({ reason: 'events-per-window', detail: '11 events, cap 5', kind: 'agent', trajectoryKey: 'session-1', revision: 1 }),
      ]);
    });

    it('refuses a window over maxBytesPerWindow', () => {
      const t = agentRun(2, () => 'x'.repeat(2000));
      const { windows, refusals } = extract(t, [{ kind: 'agent', anchorIndex: 0, triggers: ['sampled'] }], policy({ maxBytesPerWindow: 1024 }));
      expect(windows).toEqual([]);
      expect(refusals[0]!.reason).toBe('bytes-per-window');
    });

    it('refuses requests beyond maxWindowsPerTrajectory, in order', () => {
      const reqs: WindowRequest[] = [1, 2, 3, 4].map((i) => ({ kind: 'event', anchorIndex: i, triggers: ['outbound'] }));
      const { windows, refusals } = extract(agentRun(5), reqs, policy({ maxWindowsPerTrajectory: 2 }));
      expect(windows).toHaveLength(2);
      expect(refusals.map((r) => [r.reason, r.anchor])).toEqual([
        ['windows-per-trajectory', `${TRACE}/0000000000000004`],
        ['windows-per-trajectory', `${TRACE}/0000000000000005`],
      ]);
    });

    it('refuses an agent window when no agent step encloses the anchor, and disabled kinds', () => {
      const t = traj([at(1), at(2)]);
      const { refusals } = extract(
        t,
        [
          { kind: 'agent', anchorIndex: 0, triggers: ['sampled'] },
          { kind: 'turn', anchorIndex: 1, triggers: ['terminal'] },
        ],
        policy({ kinds: ['event', 'agent'] }),
      );
      expect(refusals.map((r) => r.reason)).toEqual(['no-agent-step', 'kind-disabled']);
    });
  });

  it('states capture limitations: incomplete trajectory, content not captured, the capture gaps of its steps', () => {
    const t = traj([at(1, { kind: 'agent', agentName: 'a' }), at(2, { parentId: '0000000000000001' })], {
      complete: false,
      incompleteReasons: ['idle-timeout', 'orphan-parents'],
    });
    const { windows } = extract(t, [{ kind: 'agent', anchorIndex: 0, triggers: ['sampled'] }]);
    // The tool step with no name, arguments or result is also named by each capture gap it carries.
    expect(windows[0]!.limitations).toEqual([
      'incomplete-trajectory:idle-timeout,orphan-parents',
      'content-not-captured:e1',
      'content-not-captured:e2',
      'tool-name-not-captured:e2',
      'tool-args-not-captured:e2',
      'tool-result-not-captured:e2',
    ]);
  });

  it('redacts secrets in event content and counts them', () => {
    const t = agentRun(2, (i) => (i === 0 ? 'sent with Bearer abcdefghijklmnop1234' : 'key sk-live0123456789abcdefghij'));
    const { windows } = extract(t, [{ kind: 'agent', anchorIndex: 0, triggers: ['sampled'] }]);
    const text = canonicalJson(windows[0]);
    expect(text).not.toContain('abcdefghijklmnop1234');
    expect(text).not.toContain('sk-live0123456789abcdefghij');
    expect(windows[0]!.redactions).toBe(2);
  });
});

describe('window requests (triggers)', () => {
  const hit = (anchor: string): CheckResults => ({
    l0: [{ pattern: 'error-output', anchor, detail: 'x', evidence: [{ traceId: TRACE, spanId: anchor }] }],
    repetition: { status: 'none-observed' },
    silenced: [],
  });
  const digest = windowPolicyDigest(policy());

  it('asks for an L0 anchor, each outbound action and the terminal step, in priority order', () => {
    const t = agentRun(4);
    const reqs = windowRequests(t, hit('0000000000000003'), [4], noSample, digest);
    expect(reqs).toEqual([
      { kind: 'event', anchorIndex: 2, triggers: ['l0-hit'] },
      { kind: 'event', anchorIndex: 4, triggers: ['outbound'] },
      { kind: 'turn', anchorIndex: 0, triggers: ['terminal'] },
    ]);
  });

  it('merges triggers that ask for the same window', () => {
    const reqs = windowRequests(agentRun(2), hit('0000000000000003'), [2], noSample, digest);
    expect(reqs[0]).toEqual({ kind: 'event', anchorIndex: 2, triggers: ['l0-hit', 'outbound'] });
  });

  it("anchors a sampled agent window at the agent's run, not at the span that created the agent", () => {
    // AutoGen AgentChat, agent made inside the app's span as its tracing guide does: the
    // `create_agent` span starts first. Normalized from real-shaped spans, not hand-set kinds.
    const span = (id: number, parent: number | undefined, name: string, attributes: Record<string, string>) =>
      normalizeSpan(
        makeSpan({
          traceId: TRACE,
          spanId: id.toString(16).padStart(16, '0'),
          parentSpanId: parent === undefined ? undefined : parent.toString(16).padStart(16, '0'),
          name,
          startTimeUnixNano: 1_700_000_000_000_000_000n + BigInt(id) * 1_000_000n,
          endTimeUnixNano: 1_700_000_000_000_000_000n + BigInt(id) * 1_000_000n + (id === 1 ? 900_000_000n : id === 3 ? 800_000_000n : 500_000n),
          attributes,
        }),
      );
    const autogen = { 'gen_ai.system': 'autogen', 'gen_ai.agent.name': 'weather_assistant' };
    const t = traj([
      span(1, undefined, 'conversation', {}),
      span(2, 1, 'create_agent weather_assistant', { 'gen_ai.operation.name': 'create_agent', ...autogen }),
      span(3, 1, 'invoke_agent weather_assistant', { 'gen_ai.operation.name': 'invoke_agent', ...autogen }),
      span(4, 3, 'execute_tool get_weather', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.system': 'autogen', 'gen_ai.tool.name': 'get_weather' }),
    ]);
    const all = SamplingSchema.parse({ rate: 1, triggers: { l0Hit: false, outbound: false, terminal: false } });
    expect(windowRequests(t, NO_CHECKS, [], all, digest)).toEqual([{ kind: 'agent', anchorIndex: 2, triggers: ['sampled'] }]);
  });

  it('honours disabled triggers and adds an agent window when the trajectory is sampled', () => {
    const none = SamplingSchema.parse({ rate: 0, triggers: { l0Hit: false, outbound: false, terminal: false } });
    expect(windowRequests(agentRun(2), hit('0000000000000003'), [2], none, digest)).toEqual([]);
    const all = SamplingSchema.parse({ rate: 1, triggers: { l0Hit: false, outbound: false, terminal: false } });
    expect(windowRequests(agentRun(2), NO_CHECKS, [], all, digest)).toEqual([{ kind: 'agent', anchorIndex: 0, triggers: ['sampled'] }]);
  });
});
