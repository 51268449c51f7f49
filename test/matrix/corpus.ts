/**
 * The matrix test's corpus: the in-repo TRAIL traces, the framework captures, the
 * instrumentation captures and a few crafted capture-gap cases. `replay` gets all of it, as
 * files; a `serve` combination gets a slice (every framework capture, the smallest TRAIL trace,
 * the gap cases) as OTLP protobuf request bodies, the same bytes over HTTP and as Kafka records.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { DecodeError } from '../../src/errors.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp/proto-decode.ts';
import { encodeOtlpJsonAsProto } from '../fixtures/otlp/protobufjs-codec.ts';
import { agentRunRequest } from '../reliability/agent-run.ts';
import { trailFiles } from '../helpers/trail.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

type Attr = { key: string; value: unknown };
type JsonSpan = { spanId: string; parentSpanId?: string; attributes: Attr[]; startTimeUnixNano: string; endTimeUnixNano: string };
type JsonRequest = { resourceSpans: { scopeSpans: { spans: JsonSpan[] }[] }[] };

/** Removes the attribute `key` from the span named by `index` (in agentRunRequest's order). */
function without(request: JsonRequest, index: number, key: string): JsonRequest {
  const span = request.resourceSpans[0]!.scopeSpans[0]!.spans[index]!;
  span.attributes = span.attributes.filter((a) => a.key !== key);
  return request;
}

/**
 * Agent runs (test/reliability/agent-run.ts) each missing one part of their capture: a tool
 * step's arguments, its result, its name, and a tool span stamped before its parent started
 * (clock skew).
 */
export function gapCases(): { name: string; request: JsonRequest }[] {
  const run = (n: number) => agentRunRequest({ traceId: `9a7c0000000000000000000000000${n.toString(16).padStart(3, '0')}` }) as JsonRequest;
  const skewed = run(4);
  const tool = skewed.resourceSpans[0]!.scopeSpans[0]!.spans[2]!;
  tool.startTimeUnixNano = String(BigInt(skewed.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.startTimeUnixNano) - 5_000_000_000n);
  return [
    { name: 'gap-tool-args', request: without(run(1), 2, 'gen_ai.tool.call.arguments') },
    { name: 'gap-tool-result', request: without(run(2), 2, 'gen_ai.tool.call.result') },
    { name: 'gap-tool-name', request: without(run(3), 2, 'gen_ai.tool.name') },
    { name: 'gap-clock-skew', request: skewed },
  ];
}

const frameworkFiles = (): string[] =>
  readdirSync(join(FIXTURES, 'frameworks'))
    .filter((f) => f.endsWith('.pb.gz'))
    .sort()
    .map((f) => join(FIXTURES, 'frameworks', f));

const captureFiles = (): string[] =>
  readdirSync(join(FIXTURES, 'captures'))
    .sort()
    .flatMap((d) =>
      readdirSync(join(FIXTURES, 'captures', d))
        .filter((f) => f.endsWith('.pb'))
        .sort()
        .map((f) => join(FIXTURES, 'captures', d, f)),
    );

/** Every file of the corpus for `trajwatch replay`; the gap cases are written into `dir` first. */
export async function replayCorpus(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const gaps = [];
  for (const g of gapCases()) {
    const path = join(dir, `${g.name}.otlp.json`);
    await writeFile(path, JSON.stringify(g.request));
    gaps.push(path);
  }
  return [...trailFiles(), ...frameworkFiles(), ...captureFiles(), ...gaps];
}

/** One OTLP/HTTP protobuf request body of the serve slice. */
export interface SliceRequest {
  name: string;
  signal: 'traces' | 'logs';
  /** Uncompressed protobuf. */
  body: Buffer;
  /** The first trace id (hex): the Kafka record's key, as the Collector's exporter keys by trace id. */
  key: string;
  /** Spans in the body (0 for logs), read with trajwatch's decoder. */
  spans: number;
}

function traceRequest(name: string, body: Buffer): SliceRequest {
  const decoded = decodeOtlpProto(body);
  if (decoded instanceof DecodeError) throw new Error(`${name}: ${decoded.message}`);
  return { name, signal: 'traces', body, key: decoded.spans[0]!.traceId, spans: decoded.spans.length };
}

/**
 * The serve slice: every framework trace capture, the smallest in-repo TRAIL trace (converted
 * to protobuf with protobufjs from the real .proto), the gap cases, and, when `logs`, the one
 * logs capture (openai-v2's content events; HTTP only: the Kafka source reads traces).
 */
export function serveSlice(options: { logs: boolean }): SliceRequest[] {
  const frameworks = frameworkFiles().map((path) => ({ path, body: gunzipSync(readFileSync(path)) }));
  const traces = frameworks.filter((f) => f.path.endsWith('.traces.pb.gz')).map((f) => traceRequest(f.path.split('/').at(-1)!, f.body));
  const smallestTrail = trailFiles()
    .map((path) => ({ path, json: gunzipSync(readFileSync(path)).toString('utf8') }))
    .sort((a, b) => a.json.length - b.json.length)[0]!;
  traces.push(traceRequest(smallestTrail.path.split('/').at(-1)!, Buffer.from(encodeOtlpJsonAsProto(JSON.parse(smallestTrail.json)))));
  for (const g of gapCases()) traces.push(traceRequest(g.name, Buffer.from(encodeOtlpJsonAsProto(g.request))));
  if (!options.logs) return traces;
  const logs = frameworks
    .filter((f) => f.path.endsWith('.logs.pb.gz'))
    .map((f) => ({ name: f.path.split('/').at(-1)!, signal: 'logs' as const, body: f.body, key: '', spans: 0 }));
  return [...traces, ...logs];
}
