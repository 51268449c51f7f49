import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Assembler } from '../../src/assemble/assembler.ts';
import { type AssemblerLimits, AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import type { RememberedRevision } from '../../src/assemble/revision-memory.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { trajectoryToJson } from '../../src/assemble/trajectory-json.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import { makeStep } from '../helpers/steps.ts';
import { makeSpan } from '../normalize/make-span.ts';

function setup(overrides: Partial<AssemblerLimits> = {}) {
  const closed: Trajectory[] = [];
  const limits = AssemblerLimitsSchema.parse({ quietPeriodMs: 2_000, idleTimeoutMs: 30_000, ...overrides });
  return { closed, assembler: new Assembler(limits, (t) => closed.push(t)) };
}

const T1 = '11111111111111111111111111111111';
const T2 = '22222222222222222222222222222222';

describe('Assembler closing rules', () => {
  it('closes a trajectory once its root ended and the quiet period passed, not before', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'c1', parentId: 'r1' }), 1_000);
    assembler.add(makeStep({ id: 'r1' }), 1_500);
    assembler.advance(3_499);
    expect(closed).toHaveLength(0);
    assembler.advance(3_500);
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ complete: true, incompleteReasons: [], closedBy: 'quiet-after-root', revision: 1 });
    expect(closed[0]!.steps.map((s) => s.id)).toEqual(['c1', 'r1'].sort());
  });

  it('a span arriving in the quiet period pushes the close later', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r1' }), 1_000);
    assembler.add(makeStep({ id: 'c1', parentId: 'r1' }), 2_500);
    assembler.advance(3_000);
    expect(closed).toHaveLength(0);
    assembler.advance(4_500);
    expect(closed[0]!.steps).toHaveLength(2);
  });

  it('without a root it waits for the idle timeout and says the capture is incomplete', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'c1', parentId: 'r1' }), 1_000);
    assembler.advance(30_999);
    expect(closed).toHaveLength(0);
    assembler.advance(31_000);
    expect(closed[0]).toMatchObject({
      complete: false,
      closedBy: 'idle-timeout',
      incompleteReasons: ['idle-timeout', 'orphan-parents', 'root-not-seen'],
    });
  });

  it('names orphan parents even when a root was seen', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r1' }), 0);
    assembler.add(makeStep({ id: 'c1', parentId: 'never-exported' }), 0);
    assembler.flush('end-of-input', 0);
    expect(closed[0]).toMatchObject({ complete: false, incompleteReasons: ['orphan-parents'], closedBy: 'end-of-input' });
  });

  it('at the end of input a structurally whole trajectory is complete; on shutdown it never is', () => {
    const a = setup();
    a.assembler.add(makeStep({ id: 'r1' }), 0);
    a.assembler.flush('end-of-input', 0);
    expect(a.closed[0]).toMatchObject({ complete: true, closedBy: 'end-of-input' });
    const b = setup();
    b.assembler.add(makeStep({ id: 'r1' }), 0);
    b.assembler.flush('shutdown', 0);
    expect(b.closed[0]).toMatchObject({ complete: false, incompleteReasons: ['shutdown'] });
  });

  it('orders steps by start time, then end time, then id', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'b', parentId: 'r', startTimeUnixNano: 5n, endTimeUnixNano: 9n }), 0);
    assembler.add(makeStep({ id: 'a', parentId: 'r', startTimeUnixNano: 5n, endTimeUnixNano: 9n }), 0);
    assembler.add(makeStep({ id: 'c', parentId: 'r', startTimeUnixNano: 5n, endTimeUnixNano: 7n }), 0);
    assembler.add(makeStep({ id: 'r', startTimeUnixNano: 1n, endTimeUnixNano: 10n }), 0);
    assembler.flush('end-of-input', 0);
    expect(closed[0]!.steps.map((s) => s.id)).toEqual(['r', 'c', 'a', 'b']);
  });
});

describe('Assembler keys', () => {
  it('keys by session id across traces, and pulls in spans that arrived before the session id', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'x1', traceId: T1, parentId: 'x0' }), 0);
    assembler.add(makeStep({ id: 'x0', traceId: T1, sessionId: 'conv-7' }), 0);
    assembler.add(makeStep({ id: 'y0', traceId: T2, sessionId: 'conv-7' }), 0);
    assembler.flush('end-of-input', 0);
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ key: 'conv-7', traceIds: [T1, T2], complete: true });
    expect(closed[0]!.steps.map((s) => s.id).sort()).toEqual(['x0', 'x1', 'y0']);
  });

  it('a trace whose spans name two sessions joins the smaller id, whatever the arrival order, and records the conflict', () => {
    const spans = [
      makeStep({ id: 'r', traceId: T1, sessionId: 'sess-b' }),
      makeStep({ id: 'c1', traceId: T1, parentId: 'r' }),
      makeStep({ id: 'c2', traceId: T1, parentId: 'r', sessionId: 'sess-a' }),
      makeStep({ id: 'o', traceId: T2, sessionId: 'sess-b' }),
    ];
    const outcomes = [spans, [...spans].reverse(), [spans[1]!, spans[3]!, spans[2]!, spans[0]!]].map((order) => {
      const { closed, assembler } = setup();
      for (const s of order) assembler.add(s, 0);
      assembler.flush('end-of-input', 0);
      return closed
        .map((t) => ({
          key: t.key,
          steps: t.steps.map((s) => s.id).sort(),
          reasons: t.incompleteReasons,
          conflicts: t.sessionConflicts?.map((c) => c.sessionIds),
        }))
        .sort((a, b) => a.key.localeCompare(b.key));
    });
    expect(outcomes[0]).toEqual([
      { key: 'sess-a', steps: ['c1', 'c2', 'r'], reasons: ['session-conflict'], conflicts: [['sess-a', 'sess-b']] },
      { key: 'sess-b', steps: ['o'], reasons: [], conflicts: undefined },
    ]);
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[2]).toEqual(outcomes[0]);
  });

  it('a span naming the session its trace joined is no conflict; the bytes of a moved trace follow it', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r', traceId: T1, sessionId: 'sess-z' }), 0);
    assembler.add(makeStep({ id: 'c', traceId: T1, parentId: 'r', sessionId: 'sess-z' }), 0);
    expect(assembler.stats()).toMatchObject({ openTrajectories: 1, bufferedBytes: 200 });
    assembler.add(makeStep({ id: 'd', traceId: T1, parentId: 'r', sessionId: 'sess-y' }), 0);
    expect(assembler.stats()).toMatchObject({ openTrajectories: 1, bufferedBytes: 300 });
    assembler.flush('end-of-input', 0);
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({
      key: 'sess-y',
      complete: false,
      incompleteReasons: ['session-conflict'],
      sessionConflicts: [{ traceId: T1, spanId: 'd', sessionIds: ['sess-y', 'sess-z'] }],
    });
    expect(trajectoryToJson(closed[0]!)['sessionConflicts']).toEqual([{ traceId: T1, spanId: 'd', sessionIds: ['sess-y', 'sess-z'] }]);
    expect(assembler.stats().bufferedBytes).toBe(0);
  });

  it('joins the turns of a Strands agent (GenAI spans with session.id only) into one session', () => {
    const { closed, assembler } = setup();
    const turn = (traceId: string, root: string) => [
      makeSpan({
        traceId,
        spanId: root,
        parentSpanId: undefined,
        name: 'invoke_agent Strands Agents',
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'session.id': 'strands-1' },
      }),
      makeSpan({
        traceId,
        spanId: `${root.slice(0, 15)}1`,
        parentSpanId: root,
        name: 'execute_tool get_weather',
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather', 'session.id': 'strands-1' },
      }),
    ];
    for (const span of [...turn(T1, 'aaaaaaaaaaaaaaa0'), ...turn(T2, 'bbbbbbbbbbbbbbb0')]) assembler.add(normalizeSpan(span), 0);
    assembler.flush('end-of-input', 0);
    expect(closed.map((t) => [t.key, t.traceIds, t.steps.length, t.complete])).toEqual([['strands-1', [T1, T2], 4, true]]);
  });

  it('keys by trace id when no session id is present', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r', traceId: T1 }), 0);
    assembler.add(makeStep({ id: 'r', traceId: T2 }), 0);
    assembler.flush('end-of-input', 0);
    expect(closed.map((t) => t.key).sort()).toEqual([T1, T2]);
  });
});

describe('Assembler never drops a span', () => {
  it('deduplicates an exact duplicate export', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r' }), 0);
    assembler.add(makeStep({ id: 'r' }), 0);
    assembler.flush('end-of-input', 0);
    expect(closed[0]!.steps).toHaveLength(1);
    expect(closed[0]!.conflicts).toEqual([]);
    expect(assembler.stats().duplicateSpans).toBe(1);
  });

  it('records two payloads under one span id as a capture conflict, keeping the first', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r', result: 'first' }), 0);
    assembler.add(makeStep({ id: 'r', result: 'second' }), 0);
    assembler.flush('end-of-input', 0);
    expect(closed[0]!.steps.map((s) => s.result)).toEqual(['first']);
    expect(closed[0]!.conflicts).toHaveLength(1);
    expect(closed[0]!.conflicts[0]!.keptDigest).not.toBe(closed[0]!.conflicts[0]!.refusedDigest);
  });

  it('a span arriving after close opens the next revision with every step so far', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r' }), 0);
    assembler.advance(2_000);
    assembler.add(makeStep({ id: 'late', parentId: 'r' }), 2_500);
    assembler.advance(4_500);
    expect(closed.map((t) => [t.revision, t.steps.length, t.complete])).toEqual([
      [1, 1, true],
      [2, 2, true],
    ]);
  });

  it('when the closed revision is no longer kept, the next revision says so', () => {
    const { closed, assembler } = setup({ lateSpanWindowMs: 1_000 });
    assembler.add(makeStep({ id: 'r' }), 0);
    assembler.advance(2_000);
    assembler.advance(10_000);
    assembler.add(makeStep({ id: 'late', parentId: 'r' }), 10_000);
    assembler.flush('end-of-input', 10_000);
    expect(closed[1]).toMatchObject({ revision: 2, complete: false });
    expect(closed[1]!.incompleteReasons).toContain('previous-revision-not-retained');
  });

  it('closes at the span bound as incomplete and continues in a new revision', () => {
    const { closed, assembler } = setup({ maxSpansPerTrajectory: 3 });
    for (const id of ['r', 'a', 'b', 'c']) assembler.add(makeStep({ id, ...(id === 'r' ? {} : { parentId: 'r' }) }), 0);
    assembler.flush('end-of-input', 0);
    expect(closed.map((t) => [t.revision, t.steps.length, t.incompleteReasons])).toEqual([
      [1, 3, ['span-limit']],
      [2, 1, ['orphan-parents', 'previous-revision-not-retained', 'root-not-seen', 'end-of-input', 'span-limit'].sort()],
    ]);
  });

  it('refuses admission at the open-trajectory and buffered-byte bounds', () => {
    const a = setup({ maxOpenTrajectories: 2 });
    a.assembler.add(makeStep({ id: 'r', traceId: T1 }), 0);
    expect(a.assembler.admission()).toBeUndefined();
    a.assembler.add(makeStep({ id: 'r', traceId: T2 }), 0);
    expect(a.assembler.admission()).toBe('max-open-trajectories');
    a.assembler.flush('end-of-input', 0);
    expect(a.assembler.admission()).toBeUndefined();
    const b = setup({ maxBufferedBytes: 150 });
    b.assembler.add(makeStep({ id: 'r', encodedBytes: 100 }), 0);
    expect(b.assembler.admission()).toBeUndefined();
    b.assembler.add(makeStep({ id: 'c', parentId: 'r', encodedBytes: 100 }), 0);
    expect(b.assembler.admission()).toBe('max-buffered-bytes');
  });

  it('marks a trajectory whose spans the receiver refused', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r', traceId: T1 }), 0);
    assembler.noteRefused(T1, 2, 0);
    assembler.flush('end-of-input', 0);
    expect(closed[0]).toMatchObject({ complete: false, refusedSpans: 2, incompleteReasons: ['refused-spans'] });
  });
});

describe('Assembler determinism', () => {
  it('gives the same trajectory whatever order the spans of a trace arrive in', () => {
    const steps = [
      makeStep({ id: 'r', startTimeUnixNano: 0n, endTimeUnixNano: 100n }),
      makeStep({ id: 'a', parentId: 'r', startTimeUnixNano: 10n, endTimeUnixNano: 20n }),
      makeStep({ id: 'b', parentId: 'r', startTimeUnixNano: 10n, endTimeUnixNano: 20n }),
      makeStep({ id: 'c', parentId: 'a', startTimeUnixNano: 12n, endTimeUnixNano: 15n }),
    ];
    const reference = (() => {
      const { closed, assembler } = setup();
      for (const s of steps) assembler.add(s, 0);
      assembler.flush('end-of-input', 0);
      return closed;
    })();
    fc.assert(
      fc.property(fc.shuffledSubarray(steps, { minLength: steps.length, maxLength: steps.length }), (order) => {
        const { closed, assembler } = setup();
        for (const s of order) assembler.add(s, 0);
        assembler.flush('end-of-input', 0);
        expect(closed).toEqual(reference);
      }),
    );
  });
});

describe('Assembler advance in slices', () => {
  it('closes at most maxCloses per call and says when more are due', () => {
    const { closed, assembler } = setup();
    for (const t of ['1', '2', '3']) assembler.add(makeStep({ id: 'r', traceId: t.repeat(32) }), 0);
    expect(assembler.advance(10_000, 2)).toBe(true);
    expect(closed).toHaveLength(2);
    expect(assembler.advance(10_000, 2)).toBe(false);
    expect(closed).toHaveLength(3);
  });
});

describe('Assembler revisions inherit what the capture lost', () => {
  it('a late span after refused spans: the next revision is still incomplete and counts them', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r', traceId: T1 }), 0);
    assembler.noteRefused(T1, 1, 0);
    assembler.advance(2_000);
    assembler.add(makeStep({ id: 'late', traceId: T1, parentId: 'r' }), 2_500);
    assembler.advance(4_500);
    expect(closed.map((t) => [t.revision, t.complete, t.incompleteReasons, t.refusedSpans])).toEqual([
      [1, false, ['refused-spans'], 1],
      [2, false, ['refused-spans'], 1],
    ]);
  });

  it('a late span after a capture conflict: the next revision carries the conflict', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r', result: 'first' }), 0);
    assembler.add(makeStep({ id: 'r', result: 'second' }), 0);
    assembler.advance(2_000);
    assembler.add(makeStep({ id: 'late', parentId: 'r' }), 2_500);
    assembler.advance(4_500);
    expect(closed).toHaveLength(2);
    expect(closed[1]!.conflicts).toEqual(closed[0]!.conflicts);
    expect(closed[1]!.conflicts).toHaveLength(1);
  });

  it('inherits reasons, conflicts and refused spans also after the steps were let go, through every later revision', () => {
    const { closed, assembler } = setup({ lateSpanWindowMs: 1_000 });
    assembler.add(makeStep({ id: 'r', traceId: T1, result: 'first' }), 0);
    assembler.add(makeStep({ id: 'r', traceId: T1, result: 'second' }), 0);
    assembler.noteRefused(T1, 3, 0);
    assembler.advance(2_000);
    assembler.advance(10_000);
    assembler.add(makeStep({ id: 'late', traceId: T1, parentId: 'r' }), 10_000);
    assembler.advance(40_000);
    assembler.add(makeStep({ id: 'later', traceId: T1, parentId: 'r' }), 40_500);
    assembler.flush('end-of-input', 40_500);
    expect(closed.map((t) => t.revision)).toEqual([1, 2, 3]);
    for (const t of closed.slice(1)) {
      expect(t.complete).toBe(false);
      expect(t.incompleteReasons).toEqual(expect.arrayContaining(['previous-revision-not-retained', 'refused-spans']));
      expect(t.refusedSpans).toBe(3);
      expect(t.conflicts).toHaveLength(1);
    }
  });

  it('a late span after a session conflict: the next revision still records it', () => {
    for (const lateSpanWindowMs of [60_000, 1_000]) {
      const { closed, assembler } = setup({ lateSpanWindowMs });
      assembler.add(makeStep({ id: 'r', traceId: T1, sessionId: 'conv-a' }), 0);
      assembler.add(makeStep({ id: 'c', traceId: T1, parentId: 'r', sessionId: 'conv-b' }), 0);
      assembler.advance(2_000);
      assembler.advance(10_000);
      assembler.add(makeStep({ id: 'late', traceId: T1, parentId: 'r' }), 10_000);
      assembler.flush('end-of-input', 10_000);
      expect(closed).toHaveLength(2);
      expect(closed[0]!.incompleteReasons).toContain('session-conflict');
      expect(closed[1]!.incompleteReasons).toContain('session-conflict');
      expect(closed[1]!.sessionConflicts).toEqual(closed[0]!.sessionConflicts);
    }
  });

  it('a revision after a span-limit cut says the trajectory was cut', () => {
    const { closed, assembler } = setup({ maxSpansPerTrajectory: 2 });
    assembler.add(makeStep({ id: 'r' }), 0);
    assembler.add(makeStep({ id: 'a', parentId: 'r' }), 0);
    assembler.add(makeStep({ id: 'b', parentId: 'r' }), 0);
    assembler.flush('end-of-input', 0);
    expect(closed[1]!.incompleteReasons).toEqual(expect.arrayContaining(['span-limit', 'previous-revision-not-retained']));
  });

  it('structural reasons are recomputed from the merged steps: a late root completes a retained trajectory', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'c', parentId: 'r' }), 0);
    assembler.advance(30_000);
    expect(closed[0]!.incompleteReasons).toEqual(['idle-timeout', 'orphan-parents', 'root-not-seen']);
    assembler.add(makeStep({ id: 'r' }), 31_000);
    assembler.advance(33_000);
    expect(closed[1]).toMatchObject({ revision: 2, complete: true, incompleteReasons: [] });
  });
});

describe('Assembler late duplicates', () => {
  const P = (offset: number) => ({ partition: 0, offset });

  it('an exact duplicate of a closed, retained span is counted and released: no revision, nothing held', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r' }), 0, P(0));
    assembler.advance(2_000);
    assembler.add(makeStep({ id: 'r' }), 2_500, P(1));
    expect(assembler.stats()).toMatchObject({ openTrajectories: 0, duplicateSpans: 1, lateSpans: 0 });
    const floor = new Map<number, number>();
    assembler.heldPositions(floor);
    expect(floor.size).toBe(0);
    assembler.advance(100_000);
    expect(closed).toHaveLength(1);
  });

  it('an exact duplicate after the steps were let go is still recognized (by digest): no spurious revision', () => {
    const { closed, assembler } = setup({ lateSpanWindowMs: 1_000 });
    assembler.add(makeStep({ id: 'r' }), 0);
    assembler.add(makeStep({ id: 'c', parentId: 'r' }), 0);
    assembler.advance(2_000);
    assembler.advance(10_000);
    expect(assembler.stats().retainedBytes).toBe(0);
    assembler.add(makeStep({ id: 'c', parentId: 'r' }), 10_000, P(5));
    expect(assembler.stats()).toMatchObject({ openTrajectories: 0, duplicateSpans: 1 });
    assembler.flush('end-of-input', 10_000);
    expect(closed).toHaveLength(1);
  });

  it('a different payload under a closed span id opens a revision with the conflict, and it closes', () => {
    for (const lateSpanWindowMs of [60_000, 1_000]) {
      const { closed, assembler } = setup({ lateSpanWindowMs });
      assembler.add(makeStep({ id: 'r', result: 'first' }), 0);
      assembler.advance(2_000);
      assembler.advance(10_000);
      assembler.add(makeStep({ id: 'r', result: 'second' }), 10_000, P(3));
      assembler.advance(10_000 + 30_000);
      expect(assembler.stats().openTrajectories).toBe(0);
      expect(closed).toHaveLength(2);
      expect(closed[1]).toMatchObject({ revision: 2 });
      expect(closed[1]!.steps.map((s) => s.result)).toEqual(lateSpanWindowMs === 60_000 ? ['first'] : []);
      expect(closed[1]!.conflicts.map((c) => c.spanId)).toEqual(['r']);
      expect(assembler.stats().conflictingSpans).toBe(1);
    }
  });

  it('refused spans of a closed trajectory open a revision that closes', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r', traceId: T1 }), 0);
    assembler.advance(2_000);
    assembler.noteRefused(T1, 1, 2_500, P(9));
    assembler.advance(2_500 + 30_000);
    expect(assembler.stats().openTrajectories).toBe(0);
    expect(closed[1]).toMatchObject({ revision: 2, complete: false, refusedSpans: 1 });
  });

  it('property: adds, duplicates, refusals and advances never leave an open buffer without a live deadline', () => {
    const op = fc.oneof(
      fc.record({
        op: fc.constant('add' as const),
        trace: fc.constantFrom(T1, T2),
        id: fc.constantFrom('r', 'a', 'b'),
        result: fc.constantFrom('x', 'y'),
        dtMs: fc.nat(40_000),
      }),
      fc.record({ op: fc.constant('refuse' as const), trace: fc.constantFrom(T1, T2), dtMs: fc.nat(40_000) }),
      fc.record({ op: fc.constant('advance' as const), dtMs: fc.nat(40_000) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.constantFrom(0, 1_000, 60_000), (ops, lateSpanWindowMs) => {
        const { assembler } = setup({ lateSpanWindowMs, maxRetainedBytes: 250 });
        let now = 0;
        let offset = 0;
        for (const o of ops) {
          now += o.dtMs;
          if (o.op === 'add') {
            const parent = o.id === 'r' ? {} : { parentId: 'r' };
            assembler.add(makeStep({ id: o.id, traceId: o.trace, result: o.result, ...parent }), now, P(offset++));
          } else if (o.op === 'refuse') assembler.noteRefused(o.trace, 1, now, P(offset++));
          else assembler.advance(now);
          const open = assembler.stats().openTrajectories;
          if (open > 0) expect(assembler.nextDeadlineMs()).toBeDefined();
        }
        assembler.advance(now + 31_000);
        assembler.advance(now + 62_000);
        const floor = new Map<number, number>();
        assembler.heldPositions(floor);
        expect(assembler.stats().openTrajectories).toBe(0);
        expect(floor.size).toBe(0);
      }),
    );
  });
});

describe('Assembler: a key it no longer remembers, or remembers across a restart', () => {
  it('a root re-sent after its key was let go at maxRememberedKeys opens a revision marked previous-revision-unknown', () => {
    const { closed, assembler } = setup({ maxRememberedKeys: 1 });
    assembler.add(makeStep({ id: 'r', traceId: T1 }), 0);
    assembler.advance(2_000);
    assembler.add(makeStep({ id: 'r', traceId: T2 }), 3_000);
    assembler.advance(6_000); // T1 let go
    assembler.add(makeStep({ id: 'r', traceId: T1 }), 7_000);
    assembler.advance(10_000);
    expect(closed.map((t) => [t.key, t.revision, t.complete, t.incompleteReasons])).toEqual([
      [T1, 1, true, []],
      [T2, 1, true, []],
      [T1, 1, false, ['previous-revision-unknown']],
    ]);
  });

  it('told of each closed revision, it restores them in a new process: an exact re-send is a duplicate, a changed one revision 2', () => {
    const remembered: RememberedRevision[] = [];
    const limits = AssemblerLimitsSchema.parse({ quietPeriodMs: 2_000 });
    const first = new Assembler(limits, () => {}, { memory: { closed: (r) => remembered.push(r) } });
    const root = makeStep({ id: 'r', traceId: T1, result: 'done' });
    first.add(root, 0);
    first.add(makeStep({ id: 'c', parentId: 'r', traceId: T1 }), 0);
    first.advance(2_000);
    expect(remembered.map((r) => [r.key, r.revision, r.digests?.size])).toEqual([[T1, 1, 2]]);

    const closed: Trajectory[] = [];
    const second = new Assembler(limits, (t) => closed.push(t));
    second.restore(remembered);
    second.add(root, 10_000);
    second.advance(20_000);
    expect([closed, second.stats().duplicateSpans]).toEqual([[], 1]);
    // Another payload under a known span id: a capture conflict, in the next revision (no steps of its own).
    second.add({ ...root, result: 'changed' }, 20_000);
    second.advance(60_000);
    expect(closed.map((t) => [t.revision, t.complete, t.incompleteReasons, t.conflicts.length])).toEqual([
      [2, false, ['idle-timeout', 'previous-revision-not-retained', 'root-not-seen'], 1],
    ]);
  });

  it('restored with a horizon (the memory was cut or lost), a span older than it opens a previous-revision-unknown revision', () => {
    const { closed, assembler } = setup();
    assembler.restore([], 5_000);
    assembler.add(makeStep({ id: 'r', traceId: T1 }), 10_000); // started at 1 s, before the horizon
    assembler.add(makeStep({ id: 'r', traceId: T2, startTimeUnixNano: 70_000_000_000n, endTimeUnixNano: 70_100_000_000n }), 10_000);
    assembler.advance(20_000);
    expect(closed.map((t) => [t.key, t.complete, t.incompleteReasons])).toEqual([
      [T1, false, ['previous-revision-unknown']],
      [T2, true, []],
    ]);
  });
});

describe('Assembler property: a re-sent span of a closed key never opens a complete revision 1', () => {
  it('across a restart (remembered revisions restored) and past maxRememberedKeys, for any re-sends', () => {
    const traceOf = (k: number) => k.toString(16).padStart(32, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(fc.record({ key: fc.nat(7), span: fc.constantFrom('r', 'a', 'b'), changed: fc.boolean() }), { minLength: 1, maxLength: 20 }),
        (traces, maxRememberedKeys, resends) => {
          const remembered: RememberedRevision[] = [];
          const limits = AssemblerLimitsSchema.parse({ quietPeriodMs: 1_000, idleTimeoutMs: 5_000, maxRememberedKeys });
          const first = new Assembler(limits, () => {}, { memory: { closed: (r) => remembered.push(r) } });
          const span = (k: number, id: string, changed = false) =>
            makeStep({ id, traceId: traceOf(k), ...(id === 'r' ? {} : { parentId: 'r' }), ...(changed ? { result: 'changed' } : {}) });
          for (let k = 0; k < traces; k++) {
            for (const id of ['r', 'a', 'b']) first.add(span(k, id), k * 10_000);
            first.advance(k * 10_000 + 2_000);
          }
          const closed: Trajectory[] = [];
          const second = new Assembler(limits, (t) => closed.push(t));
          second.restore(remembered);
          let now = 1_000_000;
          for (const r of resends.filter((x) => x.key < traces)) {
            second.add(span(r.key, r.span, r.changed), now);
            now += 100;
          }
          second.flush('end-of-input', now + 100_000);
          for (const t of closed) expect(t.revision === 1 && t.complete, JSON.stringify([t.key, t.incompleteReasons])).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});
