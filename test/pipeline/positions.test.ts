import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import type { Finding } from '../../src/findings/schema.ts';
import type { DecodedRequest, Span } from '../../src/ingest/span.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import type { FindingSink } from '../../src/sinks/finding-sink.ts';

/** A sink whose durability the test controls: `flushed()` waits until `release()`. */
function gatedSink() {
  let open = false;
  let waiters: (() => void)[] = [];
  const sink: FindingSink = {
    name: 'gated',
    write: () => {},
    backpressure: () => undefined,
    backlog: () => ({ records: 0, bytes: 0 }),
    flushed: () => (open ? Promise.resolve() : new Promise<void>((r) => waiters.push(r))),
    close: async () => {},
  };
  return {
    sink,
    release() {
      open = true;
      for (const w of waiters) w();
      waiters = [];
    },
    hold() {
      open = false;
    },
  };
}

function span(traceId: string, spanId: string, parentSpanId?: string, attributes: Span['attributes'] = {}): Span {
  return {
    traceId,
    spanId,
    ...(parentSpanId === undefined ? {} : { parentSpanId }),
    name: `span-${spanId}`,
    kind: 1,
    startTimeUnixNano: 1_000n,
    endTimeUnixNano: 2_000n,
    status: { code: 0 },
    attributes,
    events: [],
    links: [],
    resource: {},
    scope: { name: 'test' },
    encodedBytes: 10,
  };
}

const request = (...spans: Span[]): DecodedRequest => ({ spans, rejected: [] });
const T1 = '11111111111111111111111111111111';
const T2 = '22222222222222222222222222222222';

function setup(keyBy: 'trace' | 'session' = 'trace') {
  const gate = gatedSink();
  const closed: Trajectory[] = [];
  const limits = AssemblerLimitsSchema.parse({ quietPeriodMs: 0, idleTimeoutMs: 1_000 });
  const pipeline = new Pipeline({
    limits,
    clock: 'arrival',
    analyze: () => ({ findings: [] as Finding[], checks: { l0: [], repetition: { status: 'unavailable', reasons: [] }, silenced: [] } }),
    sinks: [gate.sink],
    keyBy,
    onTrajectory: (t) => closed.push(t),
  });
  return { pipeline, gate, closed };
}

const settleTurns = () => new Promise((r) => setTimeout(r, 0));

describe('source positions: what a partitioned source may commit', () => {
  it('holds each partition at the lowest record of an open trajectory, and past it once its output is durable', async () => {
    const { pipeline, gate } = setup();
    pipeline.accept(request(span(T1, 'a1', 'r1')), { partition: 0, offset: 5 });
    pipeline.accept(request(span(T2, 'b1')), { partition: 0, offset: 6 });
    pipeline.accept(request(span(T1, 'r1')), { partition: 0, offset: 7 });
    pipeline.accept(request(), { partition: 3, offset: 40 });
    expect(pipeline.committable()).toEqual(
      new Map([
        [0, 5],
        [3, 41],
      ]),
    );

    pipeline.tick(Date.now() + 10);
    // Closed, but the sink has not made the findings durable yet: still held.
    expect(pipeline.committable().get(0)).toBe(5);
    gate.release();
    await pipeline.settled();
    expect(pipeline.committable()).toEqual(
      new Map([
        [0, 8],
        [3, 41],
      ]),
    );
  });

  it('a closed trajectory holds only until durable even when a later one is still open', async () => {
    const { pipeline, gate } = setup();
    gate.release();
    pipeline.accept(request(span(T1, 'r1')), { partition: 1, offset: 0 });
    pipeline.tick(Date.now() + 10);
    pipeline.accept(request(span(T2, 'c1', 'missing-root')), { partition: 1, offset: 1 });
    await pipeline.settled();
    expect(pipeline.committable().get(1)).toBe(1);
  });

  it('dropping a partition forgets its open trajectories without emitting them', async () => {
    const { pipeline, closed, gate } = setup();
    gate.release();
    pipeline.accept(request(span(T1, 'a1', 'r1')), { partition: 0, offset: 0 });
    pipeline.accept(request(span(T2, 'b1', 'r2')), { partition: 1, offset: 0 });
    expect(pipeline.dropPartitions([0])).toEqual({ dropped: 1, mixed: 0 });
    expect(pipeline.committable()).toEqual(new Map([[1, 0]]));
    expect(pipeline.assembler.stats().openTrajectories).toBe(1);
    await pipeline.drain('end-of-input');
    expect(closed.map((t) => t.key)).toEqual([T2]);
  });

  it('on shutdown leaves a trajectory holding a source position open (its source replays it) and closes one without', async () => {
    const { pipeline, closed, gate } = setup();
    gate.release();
    pipeline.accept(request(span(T1, 'a1', 'r1')), { partition: 0, offset: 4 });
    pipeline.accept(request(span(T2, 'b1', 'r2')));
    await pipeline.drain('shutdown');
    expect(closed.map((t) => t.key)).toEqual([T2]);
    expect(pipeline.assembler.stats().openTrajectories).toBe(1);
    // The floor stays below it, so the source's next start replays it.
    expect(pipeline.committable().get(0)).toBe(4);
  });

  it('a trajectory fed from two partitions is kept open on revoke (dropping it would lose the kept partition)', () => {
    const { pipeline } = setup();
    pipeline.accept(request(span(T1, 'a1', 'r1')), { partition: 0, offset: 3 });
    pipeline.accept(request(span(T1, 'a2', 'r1')), { partition: 1, offset: 9 });
    expect(pipeline.dropPartitions([0])).toEqual({ dropped: 0, mixed: 1 });
    expect(pipeline.committable().get(1)).toBe(9);
  });

  it('keyed by trace, a span naming a session marks its trace partitioned-session instead of joining the session', async () => {
    const { pipeline, closed, gate } = setup('trace');
    gate.release();
    const session = { 'gen_ai.conversation.id': 'conv-1' };
    pipeline.accept(request(span(T1, 'r1', undefined, session), span(T2, 'r2', undefined, session)), { partition: 0, offset: 0 });
    await pipeline.drain('end-of-input');
    expect(closed.map((t) => [t.key, t.incompleteReasons])).toEqual([
      [T1, ['partitioned-session']],
      [T2, ['partitioned-session']],
    ]);
    const bySession = setup('session');
    bySession.gate.release();
    bySession.pipeline.accept(request(span(T1, 'r1', undefined, session), span(T2, 'r2', undefined, session)));
    await bySession.pipeline.drain('end-of-input');
    expect(bySession.closed.map((t) => t.key)).toEqual(['conv-1']);
  });

  it('a late exact duplicate of a closed trajectory (an SDK retrying its export) never holds the floor', async () => {
    const { pipeline, gate, closed } = setup();
    gate.release();
    pipeline.accept(request(span(T1, 'r1')), { partition: 0, offset: 0 });
    pipeline.tick(Date.now() + 10);
    await pipeline.settled();
    pipeline.accept(request(span(T1, 'r1')), { partition: 0, offset: 1 });
    pipeline.tick(Date.now() + 600_000);
    await pipeline.settled();
    expect(pipeline.assembler.stats()).toMatchObject({ openTrajectories: 0, duplicateSpans: 1 });
    expect(pipeline.committable()).toEqual(new Map([[0, 2]]));
    expect(closed).toHaveLength(1);
  });

  it('property: never commits past a record whose trajectory is not closed and durable', async () => {
    // Records (partition, trace, root or child) in any order; closes and durability come at random.
    const event = fc.record({
      partition: fc.integer({ min: 0, max: 2 }),
      trace: fc.integer({ min: 0, max: 5 }),
      root: fc.boolean(),
      close: fc.boolean(),
      durable: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 40 }), async (events) => {
        const { pipeline, gate, closed } = setup();
        const next = new Map<number, number>();
        const fed: { partition: number; offset: number; trace: string }[] = [];
        /** For each closed trajectory (same index as `closed`), how many records had been fed. */
        const fedAtClose: number[] = [];
        let durableCount = 0;
        let clock = Date.now();
        for (const [i, e] of events.entries()) {
          const offset = next.get(e.partition) ?? 0;
          next.set(e.partition, offset + 1);
          const trace = e.trace.toString(16).padStart(32, '0');
          pipeline.accept(request(span(trace, `s${i}`, e.root ? undefined : 'parent')), { partition: e.partition, offset });
          fed.push({ partition: e.partition, offset, trace });
          if (e.close) {
            pipeline.tick((clock += 2_000));
            while (fedAtClose.length < closed.length) fedAtClose.push(fed.length);
          }
          if (e.durable) {
            gate.release();
            await pipeline.settled();
            gate.hold();
            durableCount = closed.length;
          }
          await settleTurns();
          const committable = pipeline.committable();
          for (const [at, r] of fed.entries()) {
            if (r.offset >= (committable.get(r.partition) ?? 0)) continue;
            // The trajectory that took this record is the first of its trace closed after it.
            const taker = closed.findIndex((t, k) => t.key === r.trace && fedAtClose[k]! > at);
            expect(taker >= 0 && taker < durableCount, `${r.partition}/${r.offset} committed before its trajectory was durable`).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
