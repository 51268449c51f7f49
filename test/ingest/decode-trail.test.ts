import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../src/errors.ts';
import { decodeOtlpJson } from '../../src/ingest/otlp-json-decode.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp-proto-decode.ts';
import type { DecodedRequest, Span } from '../../src/ingest/span.ts';
import { decodeWithProtobufjs, encodeOtlpJsonAsProto } from '../fixtures/otlp/protobufjs-codec.ts';
import { loadTrailTraces } from '../fixtures/otlp/trail-traces.ts';

const traces = loadTrailTraces();

function decoded(result: DecodedRequest | DecodeError): DecodedRequest {
  if (result instanceof DecodeError) throw result;
  return result;
}

const withoutSize = ({ encodedBytes: _, ...span }: Span) => span;

function spansInJson(jsonText: string): any[] {
  return (JSON.parse(jsonText).resourceSpans as any[]).flatMap((rs) => rs.scopeSpans.flatMap((ss: any) => ss.spans));
}

describe('decoding the 26 real TRAIL traces', () => {
  it('finds all 26 fixtures', () => {
    expect(traces).toHaveLength(26);
  });

  it.each(traces.map((trace) => [trace.name, trace] as const))('%s: JSON and protobuf decoders agree span for span', (_, trace) => {
    const fromJson = decoded(decodeOtlpJson(trace.jsonText));
    const jsonSpans = spansInJson(trace.jsonText);
    expect(fromJson.rejected).toEqual([]);
    expect(fromJson.spans).toHaveLength(jsonSpans.length);
    expect(fromJson.spans.map((span) => span.spanId)).toEqual(jsonSpans.map((span) => span.spanId.toLowerCase()));

    const body = encodeOtlpJsonAsProto(JSON.parse(trace.jsonText));
    const fromProto = decoded(decodeOtlpProto(body));
    expect(fromProto.rejected).toEqual([]);
    expect(fromProto.spans.map(withoutSize)).toEqual(fromJson.spans.map(withoutSize));
    expect(fromProto.spans).toEqual(decodeWithProtobufjs(body).spans);
  });

  it('keeps the real-world shapes: INTERNAL kinds, string attributes, error status with exception events', () => {
    const spans = traces.flatMap((trace) => decoded(decodeOtlpJson(trace.jsonText)).spans);
    expect(spans.every((span) => span.kind === 1 || span.kind === 0)).toBe(true);
    const failed = spans.filter((span) => span.status.code === 2);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.some((span) => span.events.some((event) => event.name === 'exception'))).toBe(true);
    expect(spans.some((span) => typeof span.attributes['openinference.span.kind'] === 'string')).toBe(true);
  });

  it('estimates each JSON span within a factor of its JSON text size', () => {
    for (const trace of traces) {
      const actual = spansInJson(trace.jsonText).map((span) => JSON.stringify(span).length);
      const estimated = decoded(decodeOtlpJson(trace.jsonText)).spans.map((span) => span.encodedBytes);
      const ratio = estimated.reduce((a, b) => a + b, 0) / actual.reduce((a, b) => a + b, 0);
      expect(ratio).toBeGreaterThan(0.7);
      expect(ratio).toBeLessThan(1.3);
    }
  });
});
