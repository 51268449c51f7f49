/**
 * The two stages in one process, no broker: stage 1 (by trace) forwards through the real
 * record encoding, stage 2 (by session) reads it back. What stage 2 emits must be what one
 * pipeline keyed by session emits for the same spans, and stage 2 must be incomplete whenever a
 * forwarded trace was.
 */
import { describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../src/analyze.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { ConfigSchema } from '../../src/config-schema.ts';
import { DecodeError } from '../../src/errors.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp/proto-decode.ts';
import type { DecodedRequest } from '../../src/ingest/span.ts';
import type { TrajectoryForward } from '../../src/pipeline/forwarding.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { splitRecord } from '../../src/repartition/fragments.ts';
import { captureOf, decodeRepartitionRecord, encodeRefusedRecord, encodeTraceRecord, sessionOf } from '../../src/repartition/record.ts';
import { SessionStage } from '../../src/repartition/session-stage.ts';
import type { FindingSink } from '../../src/sinks/finding-sink.ts';
import { conversations } from './session-records.ts';

const config = ConfigSchema.parse({ assembler: { quietPeriodMs: 60_000, idleTimeoutMs: 120_000 } });

function collecting(ids: string[]): FindingSink {
  return {
    name: 'collect',
    write: (findings) => findings.forEach((f) => ids.push(f.finding_id)),
    backpressure: () => undefined,
    backlog: () => ({ records: 0, bytes: 0 }),
    flushed: async () => {},
    close: async () => {},
  };
}

function decoded(value: Buffer): DecodedRequest {
  const d = decodeOtlpProto(value);
  if (d instanceof DecodeError) throw d;
  return d;
}

/**
 * Stage 1 → records (the real encoding; in fragments of `fragmentBytes` when given) → stage 2's
 * record reader; returns stage 2's trajectories and every finding id.
 */
async function twoStages(
  requests: DecodedRequest[],
  options: { tooLarge?: (traceId: string) => boolean; replayForwards?: boolean; fragmentBytes?: number } = {},
) {
  const ids: string[] = [];
  const trajectories: Trajectory[] = [];
  const records: Buffer[] = [];
  const forward: TrajectoryForward = {
    forward(t, captured) {
      const steps = captured();
      const sessionId = sessionOf(steps);
      if (sessionId === undefined) return undefined;
      const value = encodeTraceRecord(sessionId, t.key, steps, captureOf(t));
      if (options.tooLarge?.(t.key) === true) records.push(encodeRefusedRecord(sessionId, t.key, steps.length, captureOf(t), value.length, 10));
      else if (options.fragmentBytes !== undefined) records.push(...splitRecord(sessionId, t.key, value, options.fragmentBytes));
      else records.push(value);
      return Promise.resolve();
    },
    backpressure: () => undefined,
  };
  const common = { limits: config.assembler, clock: 'event' as const, analyze: createAnalyzer(config), sinks: [collecting(ids)] };
  const stage1 = new Pipeline({ ...common, keyBy: 'trace', forward });
  const stage2 = new Pipeline({ ...common, keyBy: 'session', onTrajectory: (t) => trajectories.push(t) });
  for (const r of requests) stage1.accept(r);
  await stage1.drain('end-of-input');
  const feed = options.replayForwards === true ? [...records, ...records] : records;
  const sessions = new SessionStage(stage2, { maxBytes: 64 << 20, deadlineMs: 60_000 }, () => {});
  for (const [offset, value] of feed.entries()) {
    const taken = sessions.reader(value, { partition: 0, offset });
    if (typeof taken !== 'number') throw new Error(taken.detail);
  }
  expect(sessions.stats()).toMatchObject({ heldBytes: 0, partialTraces: 0 });
  await stage2.drain('end-of-input');
  return { ids, trajectories, records };
}

async function onePipeline(requests: DecodedRequest[]) {
  const ids: string[] = [];
  const trajectories: Trajectory[] = [];
  const p = new Pipeline({
    limits: config.assembler,
    clock: 'event',
    analyze: createAnalyzer(config),
    sinks: [collecting(ids)],
    keyBy: 'session',
    onTrajectory: (t) => trajectories.push(t),
  });
  for (const r of requests) p.accept(r);
  await p.drain('end-of-input');
  return { ids, trajectories };
}

describe('stage 1 → repartition record → stage 2', () => {
  const convs = conversations('unit', 12);
  const requests = convs.flatMap((c) => c.records.map((r) => decoded(r.value)));

  it('gives the trajectories and finding ids of one pipeline keyed by session', async () => {
    const split = await twoStages(requests);
    const whole = await onePipeline(requests);
    expect(split.records.length).toBe(requests.length);
    expect(new Set(split.ids)).toEqual(new Set(whole.ids));
    const view = (ts: Trajectory[]) =>
      ts.map((t) => ({ key: t.key, traceIds: t.traceIds, complete: t.complete, steps: t.steps })).sort((a, b) => (a.key < b.key ? -1 : 1));
    expect(view(split.trajectories)).toEqual(view(whole.trajectories));
    // The repetition across turns is only seen whole: at least one finding per conversation spans traces.
    expect(split.trajectories.every((t) => t.traceIds.length >= 3)).toBe(true);
  });

  it('in fragments (each trace record split in order): the same trajectories and finding ids', async () => {
    const split = await twoStages(requests, { fragmentBytes: 700 });
    const whole = await twoStages(requests);
    expect(split.records.length).toBeGreaterThan(2 * whole.records.length);
    expect(new Set(split.ids)).toEqual(new Set(whole.ids));
    expect(split.trajectories.map((t) => [t.key, t.traceIds, t.complete, t.steps.length])).toEqual(
      whole.trajectories.map((t) => [t.key, t.traceIds, t.complete, t.steps.length]),
    );
  });

  it('a replayed forward (stage 1 crashed before its commit) adds nothing, refused spans not counted twice', async () => {
    const [first, ...rest] = requests;
    const withRefusal = [{ spans: first!.spans, rejected: [{ traceId: first!.spans[0]!.traceId, reason: 'invalid' }] }, ...rest];
    const once = await twoStages(withRefusal);
    const twice = await twoStages(withRefusal, { replayForwards: true });
    expect(once.trajectories.some((t) => t.refusedSpans === 1)).toBe(true);
    expect(new Set(twice.ids)).toEqual(new Set(once.ids));
    expect(twice.trajectories.map((t) => [t.key, t.refusedSpans, t.complete])).toEqual(once.trajectories.map((t) => [t.key, t.refusedSpans, t.complete]));
  });

  it('a session is incomplete when one of its traces was: spans refused in stage 1', async () => {
    const [first, ...rest] = requests;
    const traceId = first!.spans[0]!.traceId;
    const refused: DecodedRequest = { spans: first!.spans, rejected: [{ traceId, reason: 'invalid' }] };
    const { trajectories } = await twoStages([refused, ...rest]);
    const session = trajectories.find((t) => t.traceIds.includes(traceId))!;
    expect(session.complete).toBe(false);
    expect(session.incompleteReasons).toContain('refused-spans');
    expect(session.refusedSpans).toBe(1);
    expect(trajectories.filter((t) => !t.traceIds.includes(traceId)).every((t) => t.complete)).toBe(true);
  });

  it('a trace too large for the topic is refused and its session marked repartition-refused, the others untouched', async () => {
    const victim = convs[2]!.traceIds[1]!;
    const { trajectories } = await twoStages(requests, { tooLarge: (t) => t === victim });
    const session = trajectories.find((t) => t.key === convs[2]!.sessionId)!;
    expect(session.complete).toBe(false);
    expect(session.incompleteReasons).toContain('repartition-refused');
    // Its trace is named (the capture knows it existed), its steps are not there.
    expect(session.traceIds).toContain(victim);
    expect(session.steps.some((s) => s.traceId === victim)).toBe(false);
    expect(trajectories.filter((t) => t.key !== convs[2]!.sessionId).every((t) => t.complete)).toBe(true);
  });

  it('traces naming no session are analyzed by stage 1 and never forwarded', async () => {
    const forwarded: string[] = [];
    const ids: string[] = [];
    const stage1 = new Pipeline({
      limits: config.assembler,
      clock: 'event',
      analyze: createAnalyzer(config),
      sinks: [collecting(ids)],
      keyBy: 'trace',
      forward: {
        forward: (t, captured) => (sessionOf(captured()) === undefined ? undefined : (forwarded.push(t.key), Promise.resolve())),
        backpressure: () => undefined,
      },
    });
    const { agentRunSpans, encodeSpans } = await import('../helpers/otlp-records.ts');
    stage1.accept(decoded(encodeSpans(agentRunSpans('lone').spans)));
    await stage1.drain('end-of-input');
    expect(forwarded).toEqual([]);
    expect(ids.length).toBeGreaterThan(0);
    expect(stage1.counts.trajectoriesForwarded).toBe(0);
  });
});

describe('the repartition record', () => {
  const [conv] = conversations('codec', 1);
  const steps = decodeOtlpProto(conv!.records[0]!.value);

  it('is strict: an unknown field, another version or a cut record is refused with a reason', () => {
    if (steps instanceof DecodeError) throw steps;
    const good = JSON.parse(
      encodeTraceRecord('s', 't', [], { revision: 1, incompleteReasons: [], conflicts: [], refusedSpans: 0, closedBy: 'quiet-after-root' }).toString(),
    );
    expect('error' in decodeRepartitionRecord(Buffer.from(JSON.stringify(good)))).toBe(false);
    expect(decodeRepartitionRecord(Buffer.from(JSON.stringify({ ...good, extra: 1 })))).toHaveProperty('error');
    expect(decodeRepartitionRecord(Buffer.from(JSON.stringify({ ...good, v: 2 })))).toHaveProperty('error');
    expect(decodeRepartitionRecord(Buffer.from(JSON.stringify(good).slice(0, 40)))).toHaveProperty('error');
    expect(decodeRepartitionRecord(null)).toHaveProperty('error');
  });

  it('takes the smallest session a trace names (the session assembler’s rule)', () => {
    const base = { attributes: {}, resource: {}, eventNames: [] } as unknown as Parameters<typeof sessionOf>[0][number];
    expect(sessionOf([{ ...base, sessionId: 'b' }, { ...base }, { ...base, sessionId: 'a' }])).toBe('a');
    expect(sessionOf([{ ...base }])).toBeUndefined();
  });
});
