import { Buffer } from 'node:buffer';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { beforeAll, describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src/errors.ts';
import { decodeOtlpJson } from '../../../src/ingest/otlp/json-decode.ts';
import { decodeOtlpProto } from '../../../src/ingest/otlp/proto-decode.ts';
import type { DecodedRequest, Span } from '../../../src/ingest/span.ts';
import { decodeWithProtobufjs } from '../../fixtures/otlp/protobufjs-codec.ts';
import { expectedSpan, produceSdkSpans } from '../../fixtures/otlp/sdk-spans.ts';

function decoded(result: DecodedRequest | DecodeError): DecodedRequest {
  if (result instanceof DecodeError) throw result;
  return result;
}

const bySpanId = (a: { spanId: string }, b: { spanId: string }): number => a.spanId.localeCompare(b.spanId);
const withoutSize = ({ encodedBytes: _, ...span }: Span) => span;

let sdkSpans: ReadableSpan[];
let protoBody: Uint8Array;
let jsonBody: Uint8Array;

beforeAll(async () => {
  sdkSpans = await produceSdkSpans();
  protoBody = ProtobufTraceSerializer.serializeRequest(sdkSpans)!;
  jsonBody = JsonTraceSerializer.serializeRequest(sdkSpans)!;
});

describe('decoding spans exported by the OpenTelemetry JS SDK', () => {
  it('produces the spans the SDK exported, with every attribute type, events, links, status and parents', () => {
    expect(sdkSpans).toHaveLength(5);
    const expected = sdkSpans.map(expectedSpan).sort(bySpanId);
    const fromProto = decoded(decodeOtlpProto(protoBody));
    expect(fromProto.rejected).toEqual([]);
    expect(fromProto.spans.map(withoutSize).sort(bySpanId)).toEqual(expected);
  });

  it('yields the same spans from the SDK JSON encoding as from its protobuf encoding', () => {
    const fromJson = decoded(decodeOtlpJson(Buffer.from(jsonBody).toString('utf8')));
    expect(fromJson.rejected).toEqual([]);
    expect(fromJson.spans.map(withoutSize).sort(bySpanId)).toEqual(sdkSpans.map(expectedSpan).sort(bySpanId));
  });

  it('maps int64 beyond 2^53 to a decimal string and bytes to base64', () => {
    const spans = decoded(decodeOtlpProto(protoBody)).spans;
    const root = spans.find((span) => span.name === 'invoke_agent')!;
    expect(root.attributes['int.large']).toBe('1152921504606846976');
    expect(root.attributes['int.negative.large']).toBe('-4611686018427387904');
    expect(root.attributes['int.negative']).toBe(-17);
    const producer = spans.find((span) => span.name === 'enqueue')!;
    expect(producer.attributes['bytes.value']).toBe('AAEC/f7/');
    expect(producer.attributes['kvlist.value']).toEqual({ model: 'gpt-x', tokens: 12, nested: { deep: [1, 'two', { three: true }] }, none: null });
  });

  it('shares one resource attributes object across the spans of a ResourceSpans', () => {
    for (const result of [decodeOtlpProto(protoBody), decodeOtlpJson(Buffer.from(jsonBody).toString('utf8'))]) {
      const spans = decoded(result).spans;
      expect(new Set(spans.map((span) => span.resource)).size).toBe(1);
      expect(spans[0]!.resource).toEqual({ 'service.name': 'decoder-test', 'service.instance.id': 7, 'host.arch': 'amd64' });
    }
  });

  it("agrees with protobufjs decoding the same bytes, including each span's encoded size", () => {
    const ours = decoded(decodeOtlpProto(protoBody));
    const reference = decodeWithProtobufjs(protoBody);
    expect(ours.spans.sort(bySpanId)).toEqual(reference.spans.sort(bySpanId));
    const spanBytes = ours.spans.reduce((sum, span) => sum + span.encodedBytes, 0);
    expect(spanBytes).toBeGreaterThan(0);
    expect(spanBytes).toBeLessThan(protoBody.length);
  });

  it('charges a JSON span roughly the size of its JSON text', () => {
    const text = Buffer.from(jsonBody).toString('utf8');
    const jsonSpans = (JSON.parse(text).resourceSpans as any[]).flatMap((rs) => rs.scopeSpans.flatMap((ss: any) => ss.spans));
    const actual = jsonSpans.reduce((sum: number, span: unknown) => sum + JSON.stringify(span).length, 0);
    const estimated = decoded(decodeOtlpJson(text)).spans.reduce((sum, span) => sum + span.encodedBytes, 0);
    expect(estimated / actual).toBeGreaterThan(0.5);
    expect(estimated / actual).toBeLessThan(1.5);
  });
});
