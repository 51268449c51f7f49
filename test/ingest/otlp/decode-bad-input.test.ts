import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src/errors.ts';
import { maxAnyValueDepth } from '../../../src/ingest/otlp/any-value.ts';
import { decodeOtlpJson } from '../../../src/ingest/otlp/json-decode.ts';
import { decodeOtlpProto } from '../../../src/ingest/otlp/proto-decode.ts';
import type { DecodedRequest } from '../../../src/ingest/span.ts';
import {
  attribute,
  concat,
  fixed32,
  fixed64,
  message,
  nestedArrayValue,
  raw,
  request,
  spanFields,
  string,
  tag,
  validSpanId,
  validTraceId,
  varint,
  varintField,
} from '../../fixtures/otlp/proto-bytes.ts';

function decoded(result: DecodedRequest | DecodeError): DecodedRequest {
  if (result instanceof DecodeError) throw result;
  return result;
}

function decodeError(result: DecodedRequest | DecodeError): DecodeError {
  if (!(result instanceof DecodeError)) throw new Error(`expected a DecodeError, got ${result.spans.length} spans`);
  return result;
}

describe('protobuf decoder on bad input', () => {
  it('treats an empty body as a request with no spans', () => {
    expect(decodeOtlpProto(new Uint8Array())).toEqual({ spans: [], rejected: [] });
    expect(decodeOtlpProto(request())).toEqual({ spans: [], rejected: [] });
  });

  it('names a truncated varint and its byte offset', () => {
    const error = decodeError(decodeOtlpProto(Uint8Array.from([0x0a, 0x80])));
    expect(error.message).toBe('truncated varint at byte 1');
  });

  it('refuses a length that runs past the end of the body', () => {
    const body = request(spanFields());
    const error = decodeError(decodeOtlpProto(body.subarray(0, body.length - 3)));
    expect(error.message).toMatch(/^truncated field: length \d+ at byte \d+ runs past the end of the body/);
  });

  it('never throws on any truncation of a valid body', () => {
    const body = request(spanFields({ name: 'one' }), concat(spanFields({ name: 'two' }), attribute('k', nestedArrayValue(3))));
    for (let length = 0; length < body.length; length++) {
      const result = decodeOtlpProto(body.subarray(0, length));
      expect(result instanceof DecodeError || result.spans.length === 0).toBe(true);
    }
  });

  it('names the field, message and wire types when a known field has the wrong wire type', () => {
    const body = request(concat(spanFields(), string(7, 'not a fixed64')));
    const error = decodeError(decodeOtlpProto(body));
    expect(error.message).toMatch(/^field 7 of Span has wire type 2 \(len\), expected 1 \(fixed64\)/);
    expect(decodeError(decodeOtlpProto(concat(varintField(1, 5)))).message).toMatch(/^field 1 of ExportTraceServiceRequest has wire type 0/);
  });

  it('skips unknown fields of every wire type, including nested groups', () => {
    const group = concat(tag(103, 3), varintField(1, 7), tag(5, 3), fixed32(2, 9), tag(5, 4), string(3, 'x'), tag(103, 4));
    const unknown = concat(varintField(100, 2n ** 63n), fixed32(101, 1), raw(102, Uint8Array.from([1, 2, 3])), fixed64(104, 5n), group);
    const body = concat(unknown, request(concat(unknown, spanFields(), unknown)), unknown);
    const result = decoded(decodeOtlpProto(body));
    expect(result.spans).toHaveLength(1);
    expect(result.spans[0]!.name).toBe('span');
  });

  it('refuses unmatched end-groups, invalid wire types and field number 0', () => {
    expect(decodeError(decodeOtlpProto(concat(tag(9, 4)))).message).toMatch(/end-group for field 9 .* without a matching start-group/);
    expect(decodeError(decodeOtlpProto(concat(tag(9, 3), tag(8, 4)))).message).toMatch(/closes group 9/);
    expect(decodeError(decodeOtlpProto(concat(tag(9, 3)))).message).toMatch(/truncated varint/);
    expect(decodeError(decodeOtlpProto(concat(tag(9, 7), varint(1)))).message).toMatch(/invalid wire type 7 for field 9/);
    expect(decodeError(decodeOtlpProto(Uint8Array.from([0x02, 0x00]))).message).toMatch(/invalid field tag 2/);
  });

  it('refuses groups nested without bound instead of exhausting the stack', () => {
    const open = Array.from({ length: 100_000 }, () => tag(9, 3));
    expect(decodeError(decodeOtlpProto(concat(...open))).message).toMatch(/groups nested deeper than 32/);
  });

  it('refuses a nested message whose field overruns it', () => {
    // a Status declaring 2 bytes whose string field claims 3
    const body = request(concat(spanFields(), tag(15, 2), varint(2), tag(2, 2), varint(3), Buffer.from('abc')));
    expect(decodeError(decodeOtlpProto(body)).message).toMatch(/^Status ending at byte \d+ has a field that overruns it/);
  });

  it('rejects spans with bad ids or times and keeps the rest (partial success)', () => {
    const body = request(
      spanFields({ name: 'good' }),
      spanFields({ traceId: validTraceId.slice(2) }),
      spanFields({ traceId: '0'.repeat(32) }),
      spanFields({ spanId: '00'.repeat(8) }),
      spanFields({ spanId: 'abcd' }),
      spanFields({ parentSpanId: 'abcdef01' }),
      spanFields({ start: 2_000n, end: 1_999n }),
      concat(spanFields(), varintField(6, 9)),
      concat(spanFields(), message(15, varintField(3, 3))),
      spanFields({ name: 'also good', parentSpanId: 'a1b2c3d4e5f60718' }),
    );
    const result = decoded(decodeOtlpProto(body));
    expect(result.spans.map((span) => span.name)).toEqual(['good', 'also good']);
    expect(result.spans[1]!.parentSpanId).toBe('a1b2c3d4e5f60718');
    expect(result.spans[0]).not.toHaveProperty('parentSpanId');
    expect(result.rejected.map((rejected) => rejected.reason)).toEqual([
      'trace id must be 16 bytes, got 15',
      'trace id is all zero',
      'span id is all zero',
      'span id must be 8 bytes, got 2',
      'parent span id must be empty or 8 bytes, got 4',
      'end time 1999 is before start time 2000',
      'kind 9 is not a SpanKind (0..5)',
      'status code 3 is not a StatusCode (0..2)',
    ]);
    expect(result.rejected[5]).toEqual({ traceId: validTraceId, spanId: validSpanId, reason: 'end time 1999 is before start time 2000' });
  });

  it(`accepts AnyValue nested ${maxAnyValueDepth} deep and refuses one level more`, () => {
    const ok = decoded(decodeOtlpProto(request(concat(spanFields(), attribute('deep', nestedArrayValue(maxAnyValueDepth))))));
    let value = ok.spans[0]!.attributes.deep;
    for (let i = 0; i < maxAnyValueDepth; i++) value = (value as unknown[])[0] as typeof value;
    expect(value).toBe('leaf');
    const error = decodeError(decodeOtlpProto(request(concat(spanFields(), attribute('deep', nestedArrayValue(maxAnyValueDepth + 1))))));
    expect(error.message).toMatch(/^AnyValue nested deeper than maxAnyValueDepth \(32\)/);
  });

  it('refuses hostile nesting far beyond the limit without a stack overflow', () => {
    const error = decodeError(decodeOtlpProto(request(concat(spanFields(), attribute('deep', nestedArrayValue(3_000))))));
    expect(error.message).toMatch(/maxAnyValueDepth/);
  });

  it('decodes invalid UTF-8 with replacement characters', () => {
    const badName = raw(5, Uint8Array.from([0x41, 0xff, 0xfe, 0xc3, 0x42]));
    const badValue = message(9, string(1, 'k'), message(2, raw(1, Uint8Array.from([0xed, 0xa0, 0x80]))));
    const span = decoded(decodeOtlpProto(request(concat(spanFields(), badName, badValue)))).spans[0]!;
    expect(span.name).toBe('A\uFFFD\uFFFD\uFFFDB');
    expect(span.attributes.k).toBe('\uFFFD\uFFFD\uFFFD');
  });

  it('stores an attribute named __proto__ as data, not as the prototype', () => {
    const span = decoded(decodeOtlpProto(request(concat(spanFields(), attribute('__proto__', string(1, 'x')))))).spans[0]!;
    expect(Object.getPrototypeOf(span.attributes)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(span.attributes, '__proto__')?.value).toBe('x');
  });

  it('maps an empty AnyValue to null and a later duplicate key over an earlier one', () => {
    const span = decoded(
      decodeOtlpProto(
        request(concat(spanFields(), attribute('empty', new Uint8Array()), attribute('dup', string(1, 'a')), attribute('dup', varintField(3, -5)))),
      ),
    ).spans[0]!;
    expect(span.attributes).toEqual({ empty: null, dup: -5 });
  });

  it('decodes every attribute key exactly when many distinct keys share key-cache slots', () => {
    const keys = Array.from({ length: 5_000 }, (_, i) => `key.${String(i).padStart(5, '0')}`);
    const body = request(concat(spanFields(), ...keys.map((key, i) => attribute(key, varintField(3, i)))));
    for (let pass = 0; pass < 2; pass++) {
      const span = decoded(decodeOtlpProto(body)).spans[0]!;
      expect(Object.keys(span.attributes)).toEqual(keys);
      expect(keys.every((key, i) => span.attributes[key] === i)).toBe(true);
    }
  });

  it('decodes int64 at the edges of the safe range exactly', () => {
    const span = decoded(
      decodeOtlpProto(
        request(
          concat(
            spanFields(),
            attribute('maxSafe', varintField(3, 2 ** 53 - 1)),
            attribute('aboveSafe', varintField(3, 2n ** 53n)),
            attribute('minSafe', varintField(3, -(2 ** 53 - 1))),
            attribute('belowSafe', varintField(3, -(2n ** 53n))),
            attribute('min', varintField(3, -(2n ** 63n))),
            attribute('max', varintField(3, 2n ** 63n - 1n)),
          ),
        ),
      ),
    ).spans[0]!;
    expect(span.attributes).toEqual({
      maxSafe: 2 ** 53 - 1,
      aboveSafe: '9007199254740992',
      minSafe: -(2 ** 53 - 1),
      belowSafe: '-9007199254740992',
      min: '-9223372036854775808',
      max: '9223372036854775807',
    });
  });
});

const validJsonSpan = { traceId: validTraceId, spanId: validSpanId, name: 'span', kind: 1, startTimeUnixNano: '1000', endTimeUnixNano: '2000' };
const jsonRequest = (...spans: unknown[]) =>
  JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 's' }, spans }] }] });

describe('JSON decoder on bad and unusual input', () => {
  it('treats an empty request as success with no spans', () => {
    expect(decodeOtlpJson('{}')).toEqual({ spans: [], rejected: [] });
    expect(decodeOtlpJson('{"resourceSpans":[]}')).toEqual({ spans: [], rejected: [] });
  });

  it('refuses text that is not JSON or not a request object', () => {
    expect(decodeError(decodeOtlpJson('{"resourceSpans": [')).message).toMatch(/^body is not valid JSON/);
    expect(decodeError(decodeOtlpJson('[]')).message).toBe('request: the request must be an object, got array');
    expect(decodeError(decodeOtlpJson('{"resourceSpans": {}}')).message).toBe('request: resourceSpans must be an array, got object');
  });

  it('names the path of a structurally wrong field', () => {
    const body = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [validJsonSpan, { ...validJsonSpan, attributes: 'x' }] }] }] });
    expect(decodeError(decodeOtlpJson(body)).message).toBe('resourceSpans[0].scopeSpans[0].spans[1]: attributes must be an array, got string');
    const badTime = jsonRequest({ ...validJsonSpan, endTimeUnixNano: '12ab' });
    expect(decodeError(decodeOtlpJson(badTime)).message).toBe(
      'resourceSpans[0].scopeSpans[0].spans[0]: endTimeUnixNano "12ab" is not a non-negative decimal integer',
    );
    const badInt = jsonRequest({ ...validJsonSpan, attributes: [{ key: 'n', value: { intValue: '99999999999999999999' } }] });
    expect(decodeError(decodeOtlpJson(badInt)).message).toMatch(/attribute "n": intValue 99999999999999999999 is outside int64/);
  });

  it('accepts upper-case hex ids, snake_case keys, enum names and int64 as strings or numbers', () => {
    const span = {
      trace_id: validTraceId.toUpperCase(),
      span_id: validSpanId.toUpperCase(),
      parent_span_id: 'A1B2C3D4E5F60718',
      name: 'n',
      kind: 'SPAN_KIND_CLIENT',
      start_time_unix_nano: 1000,
      end_time_unix_nano: '2000',
      status: { code: 'STATUS_CODE_ERROR', message: 'bad' },
      attributes: [
        { key: 's', value: { string_value: 'x' } },
        { key: 'i', value: { intValue: '-42' } },
        { key: 'iNumber', value: { int_value: 7 } },
        { key: 'big', value: { intValue: '9007199254740993' } },
        { key: 'd', value: { doubleValue: 'Infinity' } },
        { key: 'b', value: { bytes_value: '_-8' } },
        { key: 'empty', value: {} },
        { key: 'kv', value: { kvlist_value: { values: [{ key: 'a', value: { array_value: { values: [{ boolValue: true }] } } }] } } },
      ],
      events: [{ time_unix_nano: '1500', name: 'e' }],
      links: [{ traceId: validTraceId, spanId: validSpanId.toUpperCase() }],
    };
    const result = decoded(decodeOtlpJson(JSON.stringify({ resource_spans: [{ scope_spans: [{ spans: [span] }] }] })));
    expect(result.spans[0]).toMatchObject({
      traceId: validTraceId,
      spanId: validSpanId,
      parentSpanId: 'a1b2c3d4e5f60718',
      kind: 3,
      startTimeUnixNano: 1000n,
      endTimeUnixNano: 2000n,
      status: { code: 2, message: 'bad' },
      attributes: { s: 'x', i: -42, iNumber: 7, big: '9007199254740993', d: Infinity, b: '/+8=', empty: null, kv: { a: [true] } },
      events: [{ name: 'e', timeUnixNano: 1500n, attributes: {} }],
      links: [{ traceId: validTraceId, spanId: validSpanId, attributes: {} }],
    });
  });

  it('rejects spans with bad ids, times or enums and keeps the rest (partial success)', () => {
    const result = decoded(
      decodeOtlpJson(
        jsonRequest(
          validJsonSpan,
          { ...validJsonSpan, traceId: 'zz'.repeat(16) },
          { ...validJsonSpan, spanId: '' },
          { ...validJsonSpan, parentSpanId: '0102' },
          { ...validJsonSpan, startTimeUnixNano: '3000' },
          { ...validJsonSpan, kind: 'SPAN_KIND_WHATEVER' },
          { ...validJsonSpan, name: 'kept too' },
        ),
      ),
    );
    expect(result.spans.map((span) => span.name)).toEqual(['span', 'kept too']);
    expect(result.rejected).toEqual([
      { spanId: validSpanId, reason: 'trace id is not hex' },
      { traceId: validTraceId, reason: 'span id must be 8 bytes, got 0' },
      { traceId: validTraceId, spanId: validSpanId, reason: 'parent span id must be empty or 8 bytes, got 2' },
      { traceId: validTraceId, spanId: validSpanId, reason: 'end time 2000 is before start time 3000' },
      { traceId: validTraceId, spanId: validSpanId, reason: 'kind "SPAN_KIND_WHATEVER" is not a SpanKind (0..5)' },
    ]);
  });

  it(`accepts AnyValue nested ${maxAnyValueDepth} deep, refuses deeper, and survives hostile depth`, () => {
    const nested = (depth: number): unknown => {
      let value: unknown = { stringValue: 'leaf' };
      for (let i = 0; i < depth; i++) value = { arrayValue: { values: [value] } };
      return value;
    };
    const withValue = (value: unknown) => jsonRequest({ ...validJsonSpan, attributes: [{ key: 'deep', value }] });
    expect(decoded(decodeOtlpJson(withValue(nested(maxAnyValueDepth)))).spans).toHaveLength(1);
    expect(decodeError(decodeOtlpJson(withValue(nested(maxAnyValueDepth + 1)))).message).toMatch(
      /attribute "deep": AnyValue nested deeper than maxAnyValueDepth \(32\)/,
    );
    const hostile = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"key":"deep","value":${'{"arrayValue":{"values":['.repeat(50_000)}${']}}'.repeat(50_000)}}]}]}]}]}`;
    expect(decodeError(decodeOtlpJson(hostile)).message).toMatch(/maxAnyValueDepth/);
  });

  it('keeps replacement characters from a body with invalid UTF-8', () => {
    // the receiver hands the decoder `body.toString('utf8')`, which replaces invalid bytes
    const [before, after] = jsonRequest({ ...validJsonSpan, name: 'A#B' }).split('#') as [string, string];
    const bytes = Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xc3]), Buffer.from(after)]);
    expect(decoded(decodeOtlpJson(bytes.toString('utf8'))).spans[0]!.name).toBe('A\uFFFD\uFFFDB');
  });
});
