/**
 * What the inline analysis writes, digested, for refactorings that must not change a byte of
 * it (docs/performance.md, "Fourth round"): bench's synthetic spans through the in-process
 * pipeline, with each finding and manifest also as the Kafka sink's record value
 * (`findingRecord`) and as its external view, under the default provenance config and one
 * that exercises treatments (a matching bundle, telemetry-declared bundles) and steers.
 * Prints one sha256 per output; `corpus-digest.sh` calls it after the replays.
 *
 * Run: node_modules/.bin/node scripts/dev/analysis-digest.ts
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syntheticDataset } from '../../bench/datasets.ts';
import { createAnalyzer } from '../../src/analyze.ts';
import { ConfigSchema } from '../../src/config-schema.ts';
import { sha256Hex } from '../../src/core/digest.ts';
import { DecodeError } from '../../src/errors.ts';
import { audienceView } from '../../src/findings/audience.ts';
import type { AnalysisManifest } from '../../src/findings/manifest-schema.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp/proto-decode.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import type { FindingSink, FindingStream } from '../../src/sinks/finding-sink.ts';
import { JsonlLog } from '../../src/sinks/jsonl-log.ts';
import { findingRecord } from '../../src/sinks/kafka/kafka-finding-sink.ts';
import { LocalLogSink } from '../../src/sinks/local-log-sink.ts';

/** Every record as the Kafka sink would send it, and its external view as a line. */
class RecordingSink implements FindingSink {
  readonly name = 'recording';
  readonly kafka: string[] = [];
  readonly external: string[] = [];
  write(findings: readonly Finding[], stream: FindingStream): void {
    for (const f of findings) this.#take(f, stream);
  }
  writeManifest(manifest: AnalysisManifest): void {
    this.#take(manifest, 'findings');
  }
  #take(r: Finding | AnalysisManifest, stream: FindingStream): void {
    const record = findingRecord(r, stream);
    this.kafka.push(`${record.topic} ${record.key} ${record.id} ${JSON.stringify(record.headers)} ${record.value}`);
    this.external.push(JSON.stringify(audienceView(r, 'external')));
  }
  backpressure(): undefined {
    return undefined;
  }
  backlog(): { records: number; bytes: number } {
    return { records: 0, bytes: 0 };
  }
  async flushed(): Promise<void> {}
  async close(): Promise<void> {}
}

const PROVENANCE_RICH = {
  provenance: {
    treatments: {
      bundles: [{ id: 'arm-b', match: { 'gen_ai.agent.name': 'research-agent' }, layers: ['Tools', 'Model'], definition: { v: 1, tools: ['web_search'] } }],
    },
    conditions: { steers: { captured: true } },
  },
};

const digest = (text: string): string => sha256Hex(text).slice(0, 16);

async function run(name: string, raw: unknown, spansPerRequest: number, requests: number): Promise<void> {
  const config = ConfigSchema.parse(raw);
  const dir = mkdtempSync(join(tmpdir(), 'trajwatch-analysis-digest-'));
  try {
    const trajectoryLog = await JsonlLog.open(join(dir, 'trajectories.jsonl'), { truncate: true });
    const findings = new LocalLogSink(await JsonlLog.open(join(dir, 'findings.jsonl'), { truncate: true }), undefined, Infinity);
    const recording = new RecordingSink();
    const pipeline = new Pipeline({
      limits: config.assembler,
      clock: 'event',
      analyze: createAnalyzer(config),
      trajectoryLog,
      sinks: [findings, recording],
    });
    for (const body of syntheticDataset(spansPerRequest, requests).protoBodies) {
      const decoded = decodeOtlpProto(body);
      if (decoded instanceof DecodeError) throw decoded;
      pipeline.accept(decoded);
    }
    await pipeline.drain('end-of-input');
    await trajectoryLog.close();
    await findings.close();
    const outputs: [string, string][] = [
      ['trajectories', readFileSync(join(dir, 'trajectories.jsonl'), 'utf8')],
      ['findings', readFileSync(join(dir, 'findings.jsonl'), 'utf8')],
      ['kafka-records', recording.kafka.join('\n')],
      ['external-view', recording.external.join('\n')],
    ];
    for (const [kind, text] of outputs) console.log(`${digest(text)}  ${name}.${kind} (${text.length} chars)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await run('synthetic-10x1000', {}, 1000, 10);
await run('synthetic-200x10', {}, 10, 200);
await run('synthetic-10x1000-provenance', PROVENANCE_RICH, 1000, 10);
