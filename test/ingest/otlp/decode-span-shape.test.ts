import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src/errors.ts';
import { decodeOtlpProto } from '../../../src/ingest/otlp/proto-decode.ts';
import type { Span } from '../../../src/ingest/span.ts';
import { request, spanFields, validSpanId } from '../../fixtures/otlp/proto-bytes.ts';

function decodeSpans(body: Uint8Array): Span[] {
  const result = decodeOtlpProto(body);
  if (result instanceof DecodeError) throw result;
  return result.spans;
}

// Spans are serialized (logs, WAL) in their own key order: the decoder fixes that order.
describe('decoded Span shape', () => {
  const keysWithoutParent = [
    'traceId',
    'spanId',
    'name',
    'kind',
    'startTimeUnixNano',
    'endTimeUnixNano',
    'status',
    'attributes',
    'events',
    'links',
    'resource',
    'scope',
    'encodedBytes',
  ];

  it('has the Span keys in declaration order, parentSpanId after spanId only when there is a parent', () => {
    const [root, child] = decodeSpans(request(spanFields(), spanFields({ spanId: '00000000000000aa', parentSpanId: validSpanId })));
    expect(Object.keys(root!)).toEqual(keysWithoutParent);
    expect(Object.keys(child!)).toEqual([...keysWithoutParent.slice(0, 2), 'parentSpanId', ...keysWithoutParent.slice(2)]);
    expect(child!.parentSpanId).toBe(validSpanId);
  });

  it('shares one trace id string among spans of the same trace and tells different traces apart', () => {
    const other = '0af7651916cd43dd8448eb211c80319c';
    const spans = decodeSpans(request(spanFields(), spanFields({ spanId: '00000000000000aa' }), spanFields({ traceId: other, spanId: '00000000000000bb' })));
    expect(spans.map((span) => span.traceId)).toEqual([spans[0]!.traceId, spans[0]!.traceId, other]);
    expect(spans[0]!.traceId).toBe('5b8efff798038103d269b633813fc60c');
  });
});
