/**
 * The payloads every benchmark measures: the real TRAIL traces (all 26 with ../shared beside
 * the checkout, the five in-repo ones without; the dataset name says which) and synthetic
 * agent spans.
 */
import { Buffer } from 'node:buffer';
import { encodeOtlpJsonAsProto } from '../test/fixtures/otlp/protobufjs-codec.ts';
import { loadTrailTraces } from '../test/fixtures/otlp/trail-traces.ts';
import { trailCorpus } from '../test/helpers/trail-corpus.ts';
import { syntheticRequest, syntheticRequestProto } from './synthetic-spans.ts';

export interface Dataset {
  name: string;
  spanCount: number;
  protoBodies: Uint8Array[];
  jsonTexts: string[];
}

interface RequestShape {
  resourceSpans: { scopeSpans: { spans: unknown[] }[] }[];
}

function countSpans(request: RequestShape): number {
  return request.resourceSpans.reduce((sum, rs) => sum + rs.scopeSpans.reduce((n, ss) => n + ss.spans.length, 0), 0);
}

export function trailDataset(): Dataset {
  const traces = loadTrailTraces();
  const requests = traces.map((trace) => JSON.parse(trace.jsonText) as RequestShape);
  return {
    name: trailCorpus().kind === 'full' ? `TRAIL (${traces.length} traces)` : `TRAIL (${traces.length} in-repo traces, no ../shared)`,
    spanCount: requests.reduce((sum, request) => sum + countSpans(request), 0),
    protoBodies: requests.map((request) => encodeOtlpJsonAsProto(request)),
    jsonTexts: traces.map((trace) => trace.jsonText),
  };
}

export function syntheticDataset(spansPerRequest: number, requestCount: number): Dataset {
  const requests = Array.from({ length: requestCount }, (_, seed) => syntheticRequest(spansPerRequest, seed + 1));
  return {
    name: `synthetic ${requestCount}x${spansPerRequest} spans`,
    spanCount: spansPerRequest * requestCount,
    protoBodies: requests.map(syntheticRequestProto),
    jsonTexts: requests.map((request) => JSON.stringify(request)),
  };
}

export const protoBytes = (d: Dataset): number => d.protoBodies.reduce((sum, body) => sum + body.length, 0);
export const jsonBytes = (d: Dataset): number => d.jsonTexts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

export function describeDataset(d: Dataset): string {
  return `${d.name}: ${d.spanCount} spans, ${protoBytes(d)} B protobuf, ${jsonBytes(d)} B JSON`;
}

/** Bodies for the HTTP benchmarks: every body carries traces no other body carries. */
export interface HttpDataset {
  name: string;
  bodies: Uint8Array[];
  spanCounts: number[];
}

/** `count` synthetic requests of `spansPerRequest` spans, seeds from `firstSeed` (distinct traces and sessions per seed). */
export function syntheticHttpDataset(spansPerRequest: number, count: number, firstSeed = 1): HttpDataset {
  const bodies = Array.from({ length: count }, (_, i) => syntheticRequestProto(syntheticRequest(spansPerRequest, firstSeed + i)));
  return { name: `synthetic ${spansPerRequest}-span requests`, bodies, spanCounts: bodies.map(() => spansPerRequest) };
}

/** The TRAIL traces `copies` times over; each copy's trace ids differ in their first 8 hex digits. */
export function trailHttpDataset(copies: number, firstCopy = 0): HttpDataset {
  const requests = loadTrailTraces().map((trace) => JSON.parse(trace.jsonText) as RequestShape);
  const bodies: Uint8Array[] = [];
  const spanCounts: number[] = [];
  for (let copy = firstCopy; copy < firstCopy + copies; copy++) {
    const prefix = (0x7000_0000 + copy).toString(16).padStart(8, '0');
    for (const request of requests) {
      for (const rs of request.resourceSpans) {
        for (const ss of rs.scopeSpans) {
          for (const span of ss.spans as { traceId: string }[]) span.traceId = prefix + span.traceId.slice(8);
        }
      }
      bodies.push(encodeOtlpJsonAsProto(request));
      spanCounts.push(countSpans(request));
    }
  }
  const name =
    trailCorpus().kind === 'full' ? 'TRAIL (real smolagents traces)' : `TRAIL (real smolagents traces: the ${requests.length} in-repo ones, no ../shared)`;
  return { name, bodies, spanCounts };
}

export const httpSpanCount = (d: HttpDataset): number => d.spanCounts.reduce((a, b) => a + b, 0);
