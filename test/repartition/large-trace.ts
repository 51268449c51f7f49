/**
 * A large LLM trace from real content: the in-repo TRAIL traces (SWE-bench, smolagents under
 * OpenInference: long message histories in `llm.input_messages.*`), as many whole ones as reach
 * `minBytes` of OTLP/JSON, re-identified under one trace id below one `invoke_agent` root, every
 * span naming one session (`session.id`). Given to trajwatch as OTLP/JSON over HTTP (one request)
 * or as OTLP/protobuf Kafka records under a size, keyed by the trace id as the Collector writes them.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { encodeOtlpJsonAsProto } from '../fixtures/otlp/protobufjs-codec.ts';
import { resolveTrailCorpus } from '../helpers/trail-corpus.ts';

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: unknown }[];
  [k: string]: unknown;
}

export interface LargeTrace {
  traceId: string;
  sessionId: string;
  spans: JsonSpan[];
  /** The TRAIL traces it is made of, and the bytes of its OTLP/JSON request. */
  sources: string[];
  jsonBytes: number;
}

const hex = (seed: string, bytes: number): string =>
  createHash('sha256')
    .update(seed)
    .digest('hex')
    .slice(0, bytes * 2);

/** Whole TRAIL traces whose parents all arrived (not the one exported without its parents). */
const WHOLE_TRACES = [
  '3e65ac7e09b0edd2a5f6b0b18df20f65',
  '272cdc645b731837366576b37d40fb65',
  'af1931b778d7a82ca6a1f7dfdb9aa8bb',
  'fdaf88f3c0437bf27438b60ba4102c8a',
];

export function spansOfTrail(traceId: string): JsonSpan[] {
  const file = resolveTrailCorpus({ want: 'in-repo' }).files.find((f) => f.traceId === traceId)!;
  const request = JSON.parse(gunzipSync(readFileSync(file.otlpPath)).toString('utf8')) as {
    resourceSpans: { scopeSpans: { spans: JsonSpan[] }[] }[];
  };
  return request.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
}

/** A trace of at least `minBytes` of OTLP/JSON (5 MiB by default) in session `sessionId`. */
export function largeTrace(sessionId: string, minBytes = 5 * 1024 * 1024): LargeTrace {
  const traceId = hex(`large-${sessionId}`, 16);
  const rootId = hex(`large-root-${sessionId}`, 8);
  const session = { key: 'session.id', value: { stringValue: sessionId } };
  const spans: JsonSpan[] = [];
  const sources: string[] = [];
  let bytes = 0;
  for (const source of WHOLE_TRACES) {
    if (bytes >= minBytes) break;
    const own = (id: string) => hex(`${source}-${id}`, 8);
    for (const s of spansOfTrail(source)) {
      const parent = s.parentSpanId === undefined || s.parentSpanId === '' ? rootId : own(s.parentSpanId);
      const span = { ...s, traceId, spanId: own(s.spanId), parentSpanId: parent, attributes: [...(s.attributes ?? []), session] };
      spans.push(span);
      bytes += JSON.stringify(span).length;
    }
    sources.push(source);
  }
  if (bytes < minBytes) throw new Error(`the in-repo TRAIL traces give ${bytes} bytes, not ${minBytes}`);
  const start = spans.reduce((m, s) => (BigInt(s.startTimeUnixNano) < m ? BigInt(s.startTimeUnixNano) : m), BigInt(spans[0]!.startTimeUnixNano));
  const end = spans.reduce((m, s) => (BigInt(s.endTimeUnixNano) > m ? BigInt(s.endTimeUnixNano) : m), 0n);
  spans.push({
    traceId,
    spanId: rootId,
    parentSpanId: '',
    name: 'invoke_agent swe-agent',
    kind: 1,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(end),
    status: { code: 1 },
    attributes: [{ key: 'openinference.span.kind', value: { stringValue: 'AGENT' } }, session],
  });
  const out: LargeTrace = { traceId, sessionId, spans, sources, jsonBytes: 0 };
  out.jsonBytes = Buffer.byteLength(JSON.stringify(otlpRequest(out.spans)));
  return out;
}

/** The OTLP/JSON `ExportTraceServiceRequest` of `spans`. */
export function otlpRequest(spans: readonly JsonSpan[]): unknown {
  return {
    resourceSpans: [
      { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'swe-agent' } }] }, scopeSpans: [{ scope: { name: 'trail' }, spans }] },
    ],
  };
}

/** The trace as OTLP/protobuf records of at most `maxRecordBytes` each (whole spans), keyed by trace id. */
export function kafkaRecords(trace: LargeTrace, maxRecordBytes = 900_000): { key: string; value: Buffer }[] {
  const records: { key: string; value: Buffer }[] = [];
  let batch: JsonSpan[] = [];
  let bytes = 0;
  const flush = () => {
    if (batch.length === 0) return;
    const value = Buffer.from(encodeOtlpJsonAsProto(otlpRequest(batch)));
    if (value.length > maxRecordBytes) throw new Error(`a record of ${value.length} bytes: one span is over ${maxRecordBytes}`);
    records.push({ key: trace.traceId, value });
    batch = [];
    bytes = 0;
  };
  for (const s of trace.spans) {
    const size = JSON.stringify(s).length;
    if (bytes + size > maxRecordBytes * 0.9) flush();
    batch.push(s);
    bytes += size;
  }
  flush();
  return records;
}
