import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_ALLOWANCE_MS, ClosedRevisions, type Retained } from '../../src/assemble/closed-revisions.ts';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import { SpanDigests } from '../../src/assemble/span-digests.ts';
import { makeStep } from '../helpers/steps.ts';

function retained(key: string, closedAtMs: number, spans: number, bytes = 100): Retained {
  const steps = new Map(
    Array.from({ length: spans }, (_, i) => {
      const step = makeStep({ id: `${key}-${i}`, traceId: `t-${key}` });
      return [`${step.traceId}/${step.id}`, step] as const;
    }),
  );
  return {
    revision: 1,
    steps,
    digests: undefined,
    inherited: { reasons: [], reasonsWithoutSteps: [], conflicts: [], sessionConflicts: [], refusedSpans: 0 },
    traceIds: [`t-${key}`],
    bytes,
    closedAtMs,
    partitions: undefined,
    held: undefined,
  };
}

describe('ClosedRevisions: what is remembered of closed trajectories, under three bounds', () => {
  it('keeps steps for the late-span window, then only their digests', () => {
    const closed = new ClosedRevisions(AssemblerLimitsSchema.parse({ lateSpanWindowMs: 1_000 }), () => {});
    closed.retain('a', retained('a', 0, 3), true, 0);
    expect(closed.retainedBytes).toBe(100);
    closed.expire(1_001);
    const a = closed.get('a')!;
    expect(a.steps).toBeUndefined();
    expect(a.digests?.size).toBe(3);
    expect(closed.retainedBytes).toBe(0);
  });

  it('lets the oldest steps go first at the byte bound', () => {
    const closed = new ClosedRevisions(AssemblerLimitsSchema.parse({ maxRetainedBytes: 150 }), () => {});
    closed.retain('old', retained('old', 0, 1), true, 0);
    closed.retain('new', retained('new', 1, 1), true, 1);
    expect(closed.get('old')!.steps).toBeUndefined();
    expect(closed.get('new')!.steps?.size).toBe(1);
    expect(closed.retainedBytes).toBe(100);
  });

  it('drops the oldest digests past the digest bound, keeping the revision', () => {
    const closed = new ClosedRevisions(AssemblerLimitsSchema.parse({ lateSpanWindowMs: 0, maxRememberedSpanDigests: 2 }), () => {});
    closed.retain('old', retained('old', 0, 2), true, 0);
    closed.retain('new', retained('new', 0, 2), true, 1);
    expect(closed.get('old')!.digests).toBeUndefined();
    expect(closed.get('old')!.revision).toBe(1);
    expect(closed.get('new')!.digests?.size).toBe(2);
  });

  it('evicts the oldest key past maxRememberedKeys and says so; forget alone does not', () => {
    const evicted: string[] = [];
    const closed = new ClosedRevisions(AssemblerLimitsSchema.parse({ maxRememberedKeys: 1 }), (key) => evicted.push(key));
    closed.retain('a', retained('a', 0, 1), true, 0);
    closed.retain('b', retained('b', 0, 1), true, 0);
    expect(evicted).toEqual(['a']);
    expect(closed.get('a')).toBeUndefined();
    closed.forget('b', closed.get('b')!);
    expect(evicted).toEqual(['a']);
    expect(closed.retainedBytes).toBe(0);
    expect([...closed.entries()]).toEqual([]);
  });
});

describe('ClosedRevisions: keys let go are still "maybe seen"', () => {
  it('a key evicted at maxRememberedKeys, and its traces, may have been seen; another key not', () => {
    const closed = new ClosedRevisions(AssemblerLimitsSchema.parse({ maxRememberedKeys: 1 }), () => {});
    closed.retain('a', retained('a', 0, 1), true, 0);
    closed.retain('b', retained('b', 0, 1), true, 0);
    expect(closed.get('a')).toBeUndefined();
    expect(closed.mayHaveSeen('a', 'x', 10_000_000)).toBe(true);
    expect(closed.mayHaveSeen('other', 't-a', 10_000_000)).toBe(true);
    expect(closed.mayHaveSeen('never', 'never', 10_000_000)).toBe(false);
  });

  it('past the filter, a span older than the horizon (plus the clock-skew allowance) may have been seen', () => {
    const closed = new ClosedRevisions(AssemblerLimitsSchema.parse({ maxRememberedKeys: 0, maxForgottenKeys: 0 }), () => {});
    closed.retain('a', retained('a', 5_000, 1), true, 5_000);
    expect(closed.horizonMs).toBe(5_000);
    expect(closed.mayHaveSeen('new', 'new', 5_000 + CLOCK_SKEW_ALLOWANCE_MS)).toBe(true);
    expect(closed.mayHaveSeen('new', 'new', 5_001 + CLOCK_SKEW_ALLOWANCE_MS)).toBe(false);
    expect(closed.mayHaveSeen('new', 'new', undefined)).toBe(false);
  });

  it('restores a remembered revision as the newest of its key, digests kept, steps not', () => {
    const closed = new ClosedRevisions(AssemblerLimitsSchema.parse({}), () => {});
    const step = makeStep({ id: 's', traceId: 't-a' });
    const base = retained('a', 0, 0);
    closed.restore({
      key: 'a',
      revision: 1,
      inherited: base.inherited,
      traceIds: ['t-a'],
      partitions: undefined,
      digests: SpanDigests.of([step]),
      closedAtMs: 0,
    });
    closed.restore({
      key: 'a',
      revision: 2,
      inherited: base.inherited,
      traceIds: ['t-a'],
      partitions: undefined,
      digests: SpanDigests.of([step]),
      closedAtMs: 1,
    });
    expect([closed.get('a')!.revision, closed.get('a')!.steps, closed.retainedBytes]).toEqual([2, undefined, 0]);
    expect(closed.holdsDuplicate('a', step)).toBe(true);
    expect(closed.holdsDuplicate('a', { ...step, result: 'changed' })).toBe(false);
  });
});
