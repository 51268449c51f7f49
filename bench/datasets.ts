/** The payloads every benchmark measures: the 26 real TRAIL traces and synthetic agent spans. */
import { Buffer } from 'node:buffer';
import { encodeOtlpJsonAsProto } from '../test/fixtures/otlp/protobufjs-codec.ts';
import { loadTrailTraces } from '../test/fixtures/otlp/trail-traces.ts';
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
    name: 'TRAIL (26 traces)',
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
