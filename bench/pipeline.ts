/**
 * Pipeline benchmark: spans per CPU-second through decode alone (the practical ceiling), then
 * decode + normalize + assemble, + checks, + findings, + the durable local logs,
 * all on the same protobuf payloads in one run, so the ratios are meaningful.
 *
 * Run: node_modules/.bin/node bench/pipeline.ts [secondsPerCase]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAnalyzer } from '../src/analyze.ts';
import { Assembler } from '../src/assemble/assembler.ts';
import type { Trajectory } from '../src/assemble/trajectory.ts';
import { runChecks } from '../src/checks/run-checks.ts';
import { ConfigSchema } from '../src/config-schema.ts';
import { DecodeError } from '../src/errors.ts';
import { decodeOtlpProto } from '../src/ingest/otlp/proto-decode.ts';
import type { DecodedRequest } from '../src/ingest/span.ts';
import { normalizeSpan } from '../src/normalize/normalize.ts';
import { Pipeline } from '../src/pipeline/pipeline.ts';
import { JsonlLog } from '../src/sinks/jsonl-log.ts';
import { LocalLogSink } from '../src/sinks/local-log-sink.ts';
import { type Dataset, describeDataset, syntheticDataset, trailDataset } from './datasets.ts';
import { type Case, fmt, markdownTable, measureCases } from './measure.ts';

const config = ConfigSchema.parse({});
const analyze = createAnalyzer(config);
let sink = 0;

function decode(body: Uint8Array): DecodedRequest {
  const decoded = decodeOtlpProto(body);
  if (decoded instanceof DecodeError) throw decoded;
  return decoded;
}

/** decode → normalize → assemble, closing by event time; `onClose` sees each trajectory. */
function assembleAll(d: Dataset, onClose: (t: Trajectory) => void): void {
  const assembler = new Assembler(config.assembler, onClose);
  let watermark = 0;
  for (const body of d.protoBodies) {
    for (const span of decode(body).spans) {
      const step = normalizeSpan(span);
      const at = Number(step.endTimeUnixNano / 1_000_000n);
      if (at > watermark) watermark = at;
      assembler.add(step, at);
    }
    assembler.advance(watermark);
  }
  assembler.flush('end-of-input', watermark);
}

async function withLogs(d: Dataset, dir: string): Promise<void> {
  const trajectoryLog = await JsonlLog.open(join(dir, 'trajectories.jsonl'), { truncate: true });
  const findings = new LocalLogSink(await JsonlLog.open(join(dir, 'findings.jsonl'), { truncate: true }), undefined, Infinity);
  const pipeline = new Pipeline({ limits: config.assembler, clock: 'event', analyze, trajectoryLog, sinks: [findings] });
  for (const body of d.protoBodies) pipeline.accept(decode(body));
  await pipeline.drain('end-of-input');
  await trajectoryLog.close();
  await findings.close();
}

export const PIPELINE_STAGES = [
  'decode alone',
  '+ normalize + assemble',
  '+ checks (L0, repetition)',
  '+ findings (identity, provenance)',
  '+ durable local logs',
] as const;

export function pipelineCases(d: Dataset, dir: string): Case[] {
  return [
    {
      name: PIPELINE_STAGES[0],
      run: () => {
        for (const body of d.protoBodies) sink += decode(body).spans.length;
      },
    },
    { name: PIPELINE_STAGES[1], run: () => assembleAll(d, (t) => (sink += t.steps.length)) },
    { name: PIPELINE_STAGES[2], run: () => assembleAll(d, (t) => (sink += runChecks(t, config.checks).l0.length)) },
    { name: PIPELINE_STAGES[3], run: () => assembleAll(d, (t) => (sink += analyze(t).findings.length)) },
    { name: PIPELINE_STAGES[4], run: () => withLogs(d, dir) },
  ];
}

/** One row per dataset and stage: spans per CPU-second and the ratio to decode alone. */
export async function pipelineRows(datasets: readonly Dataset[], seconds: number): Promise<string[][]> {
  const dir = mkdtempSync(join(tmpdir(), 'trajwatch-bench-'));
  const rows: string[][] = [];
  for (const d of datasets) {
    const rates = await measureCases(pipelineCases(d, dir), seconds);
    const ceiling = rates[0]! * d.spanCount;
    for (const [i, stage] of PIPELINE_STAGES.entries()) {
      const spans = rates[i]! * d.spanCount;
      rows.push([d.name, stage, fmt(spans), (spans / ceiling).toFixed(2)]);
    }
  }
  if (sink === 0) throw new Error('nothing was measured');
  return rows;
}

export const PIPELINE_HEADER = ['dataset', 'stage', 'spans/CPU-s', 'ratio to decode'];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const seconds = Number(process.argv[2] ?? 1);
  const datasets = [trailDataset(), syntheticDataset(1000, 10), syntheticDataset(10, 200)];
  console.log(`node ${process.version}, ${seconds}s per case, best of 5 interleaved slices`);
  for (const d of datasets) console.log(describeDataset(d));
  console.log(markdownTable(PIPELINE_HEADER, await pipelineRows(datasets, seconds), 2));
}
