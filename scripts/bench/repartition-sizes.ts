/**
 * What the repartition forwards for large LLM traces (docs/scaling-out.md §4, "Forwarded bytes"):
 *
 *   node scripts/bench/repartition-sizes.ts [--max-record-bytes 1000000] [--shared ../shared/fixtures/trail-dev]
 *
 * Runs the real stage 1 (a pipeline keyed by trace, its forward encoding each closed trace as the
 * forwarder does) over the 5 MiB trace of test/repartition/large-trace.ts and over each TRAIL
 * trace (the five in the repository; the 26 with `--shared`), every span given a session id.
 * Prints, per trace: its OTLP/JSON bytes, the repartition record's bytes, the fragments at
 * `--max-record-bytes` (the topic's default `max.message.bytes`), the bytes gzip makes of them
 * (each fragment compressed alone, as one produce batch holds one fragment at that size:
 * `zlib.gzip` at its default level is kafkajs's built-in codec) and, for comparison only,
 * zstd's (Node's `zlib.zstdCompress`: not a kafkajs codec here). Prints a Markdown table.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { createAnalyzer } from '../../src/analyze.ts';
import { ConfigSchema } from '../../src/config-schema.ts';
import { DecodeError } from '../../src/errors.ts';
import { decodeOtlpJsonValue } from '../../src/ingest/otlp/json-decode.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { splitRecord } from '../../src/repartition/fragments.ts';
import { captureOf, encodeTraceRecord, sessionOf } from '../../src/repartition/record.ts';
import { largeTrace, otlpRequest } from '../../test/repartition/large-trace.ts';
import { resolveTrailCorpus } from '../../test/helpers/trail-corpus.ts';

const { values } = parseArgs({ options: { 'max-record-bytes': { type: 'string', default: '1000000' }, shared: { type: 'string' } } });
const maxRecordBytes = Number(values['max-record-bytes']);
/** The forwarder's headroom under the limit: the key and a record's overhead in its batch (`forwarder.ts`). */
const RECORD_OVERHEAD = 128;

interface Row {
  name: string;
  jsonBytes: number;
  recordBytes: number;
  fragments: number;
  gzipBytes: number;
  zstdBytes: number;
}

/** Stage 1 over one OTLP/JSON request: the record each closed trace becomes, as forwarded. */
async function stageOneRecords(request: unknown): Promise<{ sessionId: string; traceId: string; value: Buffer }[]> {
  const config = ConfigSchema.parse({ assembler: { quietPeriodMs: 60_000, idleTimeoutMs: 120_000 } });
  const out: { sessionId: string; traceId: string; value: Buffer }[] = [];
  const stage1 = new Pipeline({
    limits: config.assembler,
    clock: 'event',
    analyze: createAnalyzer(config),
    sinks: [],
    keyBy: 'trace',
    forward: {
      forward(t, captured) {
        const steps = captured();
        const sessionId = sessionOf(steps);
        if (sessionId === undefined) return undefined;
        out.push({ sessionId, traceId: t.key, value: encodeTraceRecord(sessionId, t.key, steps, captureOf(t)) });
        return Promise.resolve();
      },
      backpressure: () => undefined,
    },
  });
  const decoded = decodeOtlpJsonValue(request);
  if (decoded instanceof DecodeError) throw decoded;
  stage1.accept(decoded);
  await stage1.drain('end-of-input');
  return out;
}

async function measure(name: string, request: unknown): Promise<Row> {
  const records = await stageOneRecords(request);
  if (records.length !== 1) throw new Error(`${name}: ${records.length} forwarded records, expected 1`);
  const { sessionId, traceId, value } = records[0]!;
  const limit = maxRecordBytes - Buffer.byteLength(sessionId) - RECORD_OVERHEAD;
  const values = value.length > limit ? splitRecord(sessionId, traceId, value, limit) : [value];
  return {
    name,
    jsonBytes: Buffer.byteLength(JSON.stringify(request)),
    recordBytes: value.length,
    fragments: values.length,
    gzipBytes: values.reduce((n, v) => n + gzipSync(v).length, 0),
    zstdBytes: values.reduce((n, v) => n + zstdCompressSync(v).length, 0),
  };
}

/** A TRAIL trace's request with `session.id` on every span (TRAIL's spans name none). */
function trailRequest(path: string, traceId: string): unknown {
  const request = JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')) as {
    resourceSpans: { scopeSpans: { spans: { attributes?: unknown[] }[] }[] }[];
  };
  for (const r of request.resourceSpans)
    for (const s of r.scopeSpans)
      for (const span of s.spans) span.attributes = [...(span.attributes ?? []), { key: 'session.id', value: { stringValue: `trail-${traceId}` } }];
  return request;
}

const rows: Row[] = [];
const large = largeTrace('swe-session-large');
rows.push(await measure(`5 MiB trace (${large.sources.length} TRAIL traces, ${large.spans.length} spans)`, otlpRequest(large.spans)));
const corpus = resolveTrailCorpus(values.shared === undefined ? { want: 'in-repo' } : { want: 'full', sharedDir: values.shared });
const trail: Row[] = [];
for (const f of corpus.files) trail.push(await measure(`TRAIL ${f.traceId.slice(0, 8)}`, trailRequest(f.otlpPath, f.traceId)));
rows.push(...trail);
const sum = (k: keyof Omit<Row, 'name'>) => trail.reduce((n, r) => n + r[k], 0);
rows.push({
  name: `TRAIL, all ${trail.length}`,
  jsonBytes: sum('jsonBytes'),
  recordBytes: sum('recordBytes'),
  fragments: sum('fragments'),
  gzipBytes: sum('gzipBytes'),
  zstdBytes: sum('zstdBytes'),
});

const mb = (n: number) => (n / 1_000_000).toFixed(2);
const ratio = (a: number, b: number) => (a / b).toFixed(1);
process.stdout.write(`max record bytes ${maxRecordBytes}; ${corpus.description}\n\n`);
process.stdout.write(
  '| trace | OTLP/JSON MB | record MB | fragments | gzip MB (forwarded) | gzip ratio | zstd ratio (not used) |\n|---|---|---|---|---|---|---|\n',
);
for (const r of rows) {
  process.stdout.write(
    `| ${r.name} | ${mb(r.jsonBytes)} | ${mb(r.recordBytes)} | ${r.fragments} | ${mb(r.gzipBytes)} | ${ratio(r.recordBytes, r.gzipBytes)} | ${ratio(r.recordBytes, r.zstdBytes)} |\n`,
  );
}
