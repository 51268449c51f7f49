/**
 * Memory and scaling, in a child process started with --expose-gc (bench/run.ts does that):
 * heap bytes per buffered span (its content included, and beyond its encoded payload) and RSS
 * with N buffered spans, synthetic and TRAIL (long LLM text), and full-pipeline throughput
 * with 1k, 10k and 100k trajectories held open.
 *
 * Run: node --expose-gc bench/memory.ts <spans to buffer> <open counts, comma-separated> <passes> [TRAIL spans to buffer]
 * Prints one JSON object on stdout.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAnalyzer } from '../src/analyze.ts';
import { Assembler } from '../src/assemble/assembler.ts';
import { ConfigSchema } from '../src/config-schema.ts';
import { DecodeError } from '../src/errors.ts';
import { TextSource } from '../src/ingest/long-text.ts';
import { decodeOtlpProto } from '../src/ingest/otlp/proto-decode.ts';
import type { DecodedRequest, Span } from '../src/ingest/span.ts';
import { normalizeSpan } from '../src/normalize/normalize.ts';
import { Pipeline } from '../src/pipeline/pipeline.ts';
import { JsonlLog } from '../src/sinks/jsonl-log.ts';
import { LocalLogSink } from '../src/sinks/local-log-sink.ts';
import { syntheticHttpDataset, trailHttpDataset } from './datasets.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const settleHeap = (): NodeJS.MemoryUsage => {
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage();
};

const config = ConfigSchema.parse({});
// Far beyond any span's end time in ms, so nothing ever becomes due.
const never = { quietPeriodMs: 1e15, idleTimeoutMs: 1e15, lateSpanWindowMs: 0, maxRetainedBytes: 0 };
const bigLimits = {
  ...config.assembler,
  ...never,
  maxOpenTrajectories: 10_000_000,
  maxSpansPerTrajectory: 1_000_000,
  maxBufferedBytes: Number.MAX_SAFE_INTEGER,
};

/** As the receivers decode: long values by reference to the body (in serve they move on to the WAL, off the heap). */
function decode(body: Uint8Array): DecodedRequest {
  const d = decodeOtlpProto(body, new TextSource(Buffer.from(body.buffer, body.byteOffset, body.byteLength)));
  if (d instanceof DecodeError) throw d;
  return d;
}

/** Makes a decoded span belong to copy `n`: new trace id and conversation id, as new traffic would. */
function asCopy(span: Span, n: number): void {
  const tag = n.toString(16).padStart(8, '0');
  span.traceId = tag + span.traceId.slice(8);
  const conv = span.attributes['gen_ai.conversation.id'];
  if (typeof conv === 'string') span.attributes['gen_ai.conversation.id'] = `${conv}-${n}`;
}

const [spanTarget, openCounts, passes, trailSpanTarget] = [
  Number(process.argv[2] ?? 1_000_000),
  (process.argv[3] ?? '1000,10000,100000').split(',').map(Number),
  Number(process.argv[4] ?? 2),
  Number(process.argv[5] ?? 20_000),
];
const template = syntheticHttpDataset(500, 10, 900_000);

/**
 * 1. Buffered spans: an assembler that never closes, filled with `spanTarget` spans decoded from
 * copies of `bodies` (garbage once it returns).
 */
function bufferedSpans(bodies: readonly Uint8Array[], spanTarget: number) {
  const before = settleHeap();
  const assembler = new Assembler(bigLimits, () => {
    throw new Error('nothing should close');
  });
  let buffered = 0;
  let payloadBytes = 0;
  for (let copy = 0; buffered < spanTarget; copy++) {
    for (const body of bodies) {
      for (const span of decode(body).spans) {
        asCopy(span, copy);
        payloadBytes += span.encodedBytes;
        assembler.add(normalizeSpan(span), 0);
        buffered++;
      }
    }
  }
  const after = settleHeap();
  const buffer = {
    spans: buffered,
    openTrajectories: assembler.stats().openTrajectories,
    payloadBytesPerSpan: payloadBytes / buffered,
    heapBytesPerSpan: (after.heapUsed - before.heapUsed) / buffered,
    heapBytesPerSpanBeyondPayload: (after.heapUsed - before.heapUsed - payloadBytes) / buffered,
    rssBytes: after.rss,
    rssBeforeBytes: before.rss,
    heapUsedBytes: after.heapUsed,
  };
  return buffer;
}
const buffer = bufferedSpans(template.bodies, spanTarget);
// TRAIL: real agent spans whose content (prompts, completions, tool output) dwarfs the rest.
const trailBuffer = bufferedSpans(trailHttpDataset(1, 0).bodies, trailSpanTarget);

// 2. Scaling: full pipeline (event clock, durable logs) with `open` trajectories held open.
const traffic = Array.from({ length: passes }, (_, p) => syntheticHttpDataset(500, 20, 1 + p * 20));
const scaling = [];
let warm = false;
for (const open of [openCounts[0]!, ...openCounts]) {
  const warmup = !warm;
  warm = true;
  const dir = mkdtempSync(join(tmpdir(), 'trajwatch-scaling-'));
  const trajectoryLog = await JsonlLog.open(join(dir, 'trajectories.jsonl'), { truncate: true });
  const findings = new LocalLogSink(await JsonlLog.open(join(dir, 'findings.jsonl'), { truncate: true }), undefined, Infinity);
  // Held-open trajectories: one span each without a root, so only the (never reached) idle timeout closes them.
  const limits = { ...bigLimits, quietPeriodMs: config.assembler.quietPeriodMs };
  const pipeline = new Pipeline({ limits, clock: 'event', analyze: createAnalyzer(config), trajectoryLog, sinks: [findings] });
  const holder = decode(template.bodies[0]!).spans.find((s) => s.parentSpanId !== undefined)!;
  const base = settleHeap();
  for (let i = 0; i < open; i++) {
    const span = { ...holder, attributes: { ...holder.attributes } };
    asCopy(span, 0x4000_0000 + i);
    span.spanId = (0x1000_0000 + i).toString(16).padStart(16, '0');
    span.startTimeUnixNano = 1_000n;
    span.endTimeUnixNano = 2_000n;
    pipeline.accept({ spans: [span], rejected: [] });
  }
  const held = settleHeap();
  const cpu = process.cpuUsage();
  let spans = 0;
  for (const d of traffic) {
    for (const body of d.bodies) {
      const request = decode(body);
      pipeline.accept(request);
      spans += request.spans.length;
    }
    await pipeline.flushed();
  }
  const used = process.cpuUsage(cpu);
  const stillOpen = pipeline.assembler.stats().openTrajectories;
  if (warmup) {
    await trajectoryLog.close();
    await findings.close();
    continue; // the first round only warms up the JIT
  }
  scaling.push({
    open,
    stillOpen,
    spansPerCpuSecond: spans / ((used.user + used.system) / 1e6),
    heapBytesPerOpenTrajectory: (held.heapUsed - base.heapUsed) / open,
    heapUsedBytes: held.heapUsed,
    rssBytes: process.memoryUsage().rss,
  });
  await trajectoryLog.close();
  await findings.close();
}
process.stdout.write(`${JSON.stringify({ buffer, trailBuffer, scaling })}\n`);
