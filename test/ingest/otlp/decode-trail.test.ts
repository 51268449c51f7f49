import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src/errors.ts';
import { decodeOtlpJson } from '../../../src/ingest/otlp/json-decode.ts';
import { decodeOtlpProto } from '../../../src/ingest/otlp/proto-decode.ts';
import type { DecodedRequest, Span } from '../../../src/ingest/span.ts';
import { decodeWithProtobufjs, encodeOtlpJsonAsProto } from '../../fixtures/otlp/protobufjs-codec.ts';
import { loadTrailTraces } from '../../fixtures/otlp/trail-traces.ts';
import { trailCorpus } from '../../helpers/trail-corpus.ts';

const corpus = trailCorpus();
const traces = loadTrailTraces();
const eachTrace = traces.map((trace) => [trace.name, trace] as const);

function decoded(result: DecodedRequest | DecodeError): DecodedRequest {
  if (result instanceof DecodeError) throw result;
  return result;
}

const withoutSize = ({ encodedBytes: _, ...span }: Span) => span;

function spansInJson(jsonText: string): any[] {
  return (JSON.parse(jsonText).resourceSpans as any[]).flatMap((rs) => rs.scopeSpans.flatMap((ss: any) => ss.spans));
}

describe(`decoding the real TRAIL traces (${corpus.description})`, () => {
  it(`finds every trace of the corpus (${corpus.files.length})`, () => {
    expect(traces.map((trace) => trace.name)).toEqual(corpus.files.map((f) => `${f.traceId}.otlp.json.gz`));
  });

  it.each(eachTrace)('%s: JSON and protobuf decoders agree span for span', (_, trace) => {
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

  it.each(eachTrace)('%s: keeps the real-world shapes: INTERNAL kinds, string attributes, error status exactly with an exception event', (_, trace) => {
    const spans = decoded(decodeOtlpJson(trace.jsonText)).spans;
    expect(spans.length).toBeGreaterThan(0);
    for (const span of spans) {
      expect(span.kind, span.spanId).toBe(1);
      for (const [key, value] of Object.entries(span.attributes)) expect(typeof value, `${span.spanId} ${key}`).toBe('string');
      expect(span.status.code === 2, span.spanId).toBe(span.events.some((event) => event.name === 'exception'));
    }
    expect(spans.some((span) => typeof span.attributes['openinference.span.kind'] === 'string')).toBe(true);
  });

  it('has failed spans among them, so the error-status rule above is exercised', () => {
    const failed = traces.flatMap((trace) => decoded(decodeOtlpJson(trace.jsonText)).spans).filter((span) => span.status.code === 2);
    expect(failed.length).toBeGreaterThan(0);
  });

  it.each(eachTrace)('%s: estimates its JSON spans within a factor of their JSON text size', (_, trace) => {
    const actual = spansInJson(trace.jsonText).map((span) => JSON.stringify(span).length);
    const estimated = decoded(decodeOtlpJson(trace.jsonText)).spans.map((span) => span.encodedBytes);
    const ratio = estimated.reduce((a, b) => a + b, 0) / actual.reduce((a, b) => a + b, 0);
    expect(ratio).toBeGreaterThan(0.7);
    expect(ratio).toBeLessThan(1.3);
  });
});
