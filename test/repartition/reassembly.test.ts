/**
 * Fragmented repartition records (docs/scaling-out.md §4): a trace record split in order by
 * stage 1 and put back together by stage 2 — order, redelivered duplicates, a lost fragment,
 * the bound, the deadline, a corrupt fragment, and what may be committed meanwhile. Stage 2 is
 * the real session pipeline behind the real record reader.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../src/analyze.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { ConfigSchema } from '../../src/config-schema.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { splitRecord } from '../../src/repartition/fragments.ts';
import { Reassembly } from '../../src/repartition/reassembly.ts';
import { decodeRepartitionRecord, type RepartitionFragment } from '../../src/repartition/record.ts';
import { SessionStage } from '../../src/repartition/session-stage.ts';
import { traceRecord } from './step-records.ts';

const config = ConfigSchema.parse({ assembler: { quietPeriodMs: 60_000, idleTimeoutMs: 120_000 } });
function fragment(value: Buffer): RepartitionFragment {
  const f = decodeRepartitionRecord(value);
  if ('error' in f || f.kind !== 'fragment') throw new Error(`not a fragment: ${JSON.stringify(f).slice(0, 200)}`);
  return f;
}

const TRACE = 'a'.repeat(32);

describe('splitRecord', () => {
  it('gives ordered fragments under the size, each a header line and a slice, that concatenate to the record', () => {
    const record = traceRecord('conv-1', TRACE, 40, 500);
    const values = splitRecord('conv-1', TRACE, record, 4_000);
    expect(values.length).toBeGreaterThan(4);
    expect(values.every((v) => v.length <= 4_000)).toBe(true);
    const frags = values.map(fragment);
    expect(frags.map((f) => f.index)).toEqual(values.map((_, i) => i));
    expect(frags.every((f) => f.count === values.length && f.bytes === record.length && f.chunk.length > 0)).toBe(true);
    expect(Buffer.concat(frags.map((f) => f.chunk)).equals(record)).toBe(true);
    // A whole record is never taken for a fragment (JSON escapes newlines), and a record that fits is not split.
    expect(decodeRepartitionRecord(record)).toMatchObject({ kind: 'trace' });
    expect(() => splitRecord('conv-1', TRACE, record, record.length + 1_000)).toThrow(/not split/);
  });

  it('a fragment header that does not parse, or names an index past its count, is refused with a reason', () => {
    const [first] = splitRecord('conv-1', TRACE, traceRecord('conv-1', TRACE, 5, 500), 1_000);
    const text = first!.toString('latin1');
    expect(decodeRepartitionRecord(Buffer.from(text.replace('"index":0', '"index":99'), 'latin1'))).toHaveProperty('error');
    expect(decodeRepartitionRecord(Buffer.from(text.replace('"kind":"fragment"', '"kind":"fragment","x":1'), 'latin1'))).toHaveProperty('error');
    expect(decodeRepartitionRecord(Buffer.from(`{not json\n${text}`, 'latin1'))).toHaveProperty('error');
  });
});

describe('Reassembly', () => {
  const record = traceRecord('conv-1', TRACE, 30, 400);
  const frags = splitRecord('conv-1', TRACE, record, 2_000).map(fragment);

  it('in any order and with any duplicates, gives the record exactly once, then holds nothing', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: frags.length - 1 }), { maxLength: 20 }),
        fc.shuffledSubarray(
          frags.map((_, i) => i),
          { minLength: frags.length },
        ),
        (extra, order) => {
          const r = new Reassembly({ maxBytes: 1 << 20, deadlineMs: 1_000 });
          const wholes: Buffer[] = [];
          for (const i of [...order.slice(0, 1), ...extra, ...order.slice(1)]) {
            const out = r.add(frags[i]!, undefined, 0);
            if (out.kind === 'whole') wholes.push(out.record);
            expect(out.kind).not.toBe('lost');
          }
          expect(wholes).toHaveLength(1);
          expect(wholes[0]!.equals(record)).toBe(true);
          expect(r.stats()).toMatchObject({ heldBytes: 0, partialTraces: 0, whole: 1 });
        },
      ),
    );
  });

  it('fragments redelivered after the trace was whole are duplicates; after the partition was dropped (a rebalance), they make it whole again', () => {
    const r = new Reassembly({ maxBytes: 1 << 20, deadlineMs: 1_000 });
    const at = (i: number) => ({ partition: 3, offset: 100 + i });
    const outcomes = frags.map((f, i) => r.add(f, at(i), 0).kind);
    expect(outcomes.at(-1)).toBe('whole');
    expect(frags.map((f, i) => r.add(f, at(i), 0).kind).every((k) => k === 'duplicate')).toBe(true);
    r.dropPartitions(new Set([3]));
    expect(frags.map((f, i) => r.add(f, at(i), 0).kind).at(-1)).toBe('whole');
    expect(r.stats()).toMatchObject({ whole: 2, duplicates: frags.length });
  });

  it('a trace not whole by its deadline is lost (deadline), named with its first position; postponed time does not count', () => {
    const r = new Reassembly({ maxBytes: 1 << 20, deadlineMs: 1_000 });
    for (const [i, f] of frags.slice(0, -1).entries()) r.add(f, { partition: 1, offset: 50 + i }, 0);
    expect(r.expire(999)).toEqual([]);
    r.postpone(500);
    expect(r.expire(1_200)).toEqual([]);
    const [lost] = r.expire(1_500);
    expect(lost).toMatchObject({ sessionId: 'conv-1', traceId: TRACE, loss: 'deadline', position: { partition: 1, offset: 50 }, received: frags.length - 1 });
    expect(r.stats()).toMatchObject({ heldBytes: 0, partialTraces: 0, lost: { deadline: 1 } });
    // The missing fragment arriving late does not start it again.
    expect(r.add(frags.at(-1)!, { partition: 1, offset: 90 }, 2_000).kind).toBe('duplicate');
  });

  it('a fragment that would pass the bound gives its trace up (over-bound), freeing what it held; another trace still fits', () => {
    const r = new Reassembly({ maxBytes: 3 * frags[0]!.chunk.length, deadlineMs: 1_000 });
    const kinds = frags.slice(0, 4).map((f) => r.add(f, undefined, 0).kind);
    expect(kinds).toEqual(['held', 'held', 'held', 'lost']);
    expect(r.stats()).toMatchObject({ heldBytes: 0, partialTraces: 0, lost: { 'over-bound': 1 } });
    expect(r.add(frags[4]!, undefined, 0).kind).toBe('duplicate');
    const small = splitRecord('conv-2', 'b'.repeat(32), traceRecord('conv-2', 'b'.repeat(32), 2, 300), 500).map(fragment);
    expect(small.reduce((n, f) => n + f.chunk.length, 0)).toBeLessThanOrEqual(3 * frags[0]!.chunk.length);
    expect(small.map((f) => r.add(f, undefined, 0).kind).at(-1)).toBe('whole');
  });

  it('a corrupt fragment is found by the digest (digest-mismatch)', () => {
    const r = new Reassembly({ maxBytes: 1 << 20, deadlineMs: 1_000 });
    const bad = frags.map((f, i) => (i === 2 ? { ...f, chunk: Buffer.from(f.chunk.toString('latin1').replace('lorem', 'LOREM'), 'latin1') } : f));
    const last = bad.map((f) => r.add(f, undefined, 0)).at(-1)!;
    expect(last).toMatchObject({ kind: 'lost', lost: { loss: 'digest-mismatch' } });
  });

  it('the floor holds each unfinished trace at its first fragment', () => {
    const r = new Reassembly({ maxBytes: 1 << 20, deadlineMs: 1_000 });
    r.add(frags[0]!, { partition: 0, offset: 7 }, 0);
    r.add(frags[1]!, { partition: 0, offset: 9 }, 0);
    const floor = new Map([[0, 8]]);
    r.floor(floor);
    expect(floor).toEqual(new Map([[0, 7]]));
  });
});

describe('SessionStage: fragments into the session pipeline', () => {
  function stage2() {
    const trajectories: Trajectory[] = [];
    const pipeline = new Pipeline({
      limits: config.assembler,
      clock: 'event',
      analyze: createAnalyzer(config),
      sinks: [],
      keyBy: 'session',
      onTrajectory: (t) => trajectories.push(t),
    });
    let now = 0;
    const stage = new SessionStage(
      pipeline,
      { maxBytes: 1 << 20, deadlineMs: 1_000 },
      () => {},
      () => now,
    );
    return { pipeline, stage, trajectories, advance: (ms: number) => (now += ms) };
  }
  const record = traceRecord('conv-9', TRACE, 20, 400);
  const values = splitRecord('conv-9', TRACE, record, 2_000);

  it('nothing past a fragment of an unfinished trace is committable; once whole, the trace is held where it began', async () => {
    const { pipeline, stage, trajectories } = stage2();
    const other = traceRecord('conv-8', 'c'.repeat(32), 2, 100);
    // Offsets 10.. on partition 0: the fragments, with another session's record between them.
    stage.reader(values[0]!, { partition: 0, offset: 10 });
    stage.reader(other, { partition: 0, offset: 11 });
    for (let i = 1; i < values.length - 1; i++) stage.reader(values[i]!, { partition: 0, offset: 11 + i });
    expect(stage.input.committable().get(0)).toBe(10);
    expect(stage.reader(values.at(-1)!, { partition: 0, offset: 11 + values.length - 1 })).toBe(20);
    // Whole: the session's open trajectory holds it from the first fragment on.
    expect(stage.input.committable().get(0)).toBe(10);
    expect(stage.stats()).toMatchObject({ heldBytes: 0, whole: 1 });
    await pipeline.drain('end-of-input');
    const session = trajectories.find((t) => t.key === 'conv-9')!;
    expect(session.steps).toHaveLength(20);
    expect(session.incompleteReasons).not.toContain('repartition-fragment-lost');
    expect(stage.input.committable().get(0)).toBe(11 + values.length);
  });

  it('a lost fragment marks the session incomplete, repartition-fragment-lost, once its deadline passed', async () => {
    const { pipeline, stage, trajectories, advance } = stage2();
    const whole = traceRecord('conv-9', 'd'.repeat(32), 3, 100);
    stage.reader(whole, { partition: 2, offset: 0 });
    values.forEach((v, i) => i !== 3 && stage.reader(v, { partition: 2, offset: 1 + i }));
    stage.sweep();
    expect(stage.stats().partialTraces).toBe(1);
    expect(stage.input.committable().get(2)).toBe(0);
    advance(1_000);
    stage.sweep();
    expect(stage.stats()).toMatchObject({ partialTraces: 0, lost: { deadline: 1 } });
    await pipeline.drain('end-of-input');
    const session = trajectories.find((t) => t.key === 'conv-9')!;
    expect(session.complete).toBe(false);
    expect(session.incompleteReasons).toContain('repartition-fragment-lost');
    // The trace is named (the session knows it existed); the whole trace's steps are there, the lost one's are not.
    expect(session.traceIds).toContain(TRACE);
    expect(session.steps.every((s) => s.traceId === 'd'.repeat(32))).toBe(true);
  });

  it('a copy cut short by a stage-1 crash is superseded, not lost, when the trace arrives whole again after it', async () => {
    const { pipeline, stage, trajectories, advance } = stage2();
    // The first copy: its member died after three fragments. The re-sent copy differs (another digest) and comes whole.
    const first = splitRecord('conv-9', TRACE, traceRecord('conv-9', TRACE, 19, 400), 2_000);
    first.slice(0, 3).forEach((v, i) => stage.reader(v, { partition: 3, offset: i }));
    expect(stage.stats().partialTraces).toBe(1);
    values.forEach((v, i) => stage.reader(v, { partition: 3, offset: 3 + i }));
    expect(stage.stats()).toMatchObject({ partialTraces: 0, heldBytes: 0, whole: 1, superseded: 1, lost: { deadline: 0 } });
    advance(10_000);
    stage.sweep();
    expect(stage.stats().lost.deadline).toBe(0);
    await pipeline.drain('end-of-input');
    const session = trajectories.find((t) => t.key === 'conv-9')!;
    expect(session.incompleteReasons).not.toContain('repartition-fragment-lost');
    expect(session.steps).toHaveLength(20);
  });

  it('an unfragmented copy of the trace supersedes an unfinished fragmented one too; another trace of the session is kept', () => {
    const { stage } = stage2();
    values.slice(0, 2).forEach((v, i) => stage.reader(v, { partition: 5, offset: i }));
    const otherTrace = splitRecord('conv-9', 'e'.repeat(32), traceRecord('conv-9', 'e'.repeat(32), 20, 400), 2_000);
    stage.reader(otherTrace[0]!, { partition: 5, offset: 2 });
    stage.reader(traceRecord('conv-9', TRACE, 2, 100), { partition: 5, offset: 3 });
    expect(stage.stats()).toMatchObject({ partialTraces: 1, superseded: 1 });
    expect(stage.input.committable().get(5)).toBe(2);
  });

  it('a partition dropped at a rebalance forgets its unfinished traces (the next owner replays them from the first fragment)', () => {
    const { stage } = stage2();
    values.slice(0, 2).forEach((v, i) => stage.reader(v, { partition: 4, offset: i }));
    expect(stage.stats().partialTraces).toBe(1);
    stage.input.dropPartitions([4]);
    expect(stage.stats()).toMatchObject({ partialTraces: 0, heldBytes: 0 });
    expect(stage.input.committable().has(4)).toBe(false);
  });
});
