/**
 * The per-span checks both OTLP decoders apply. A span failing one is rejected (OTLP
 * partial success) while the rest of its request is kept.
 */

const zeroTraceId = '0'.repeat(32);
const zeroSpanId = '0'.repeat(16);

/** What a decoder knows about a span before it becomes a {@link Span}. Ids are lower-case hex. */
export interface SpanIdentity {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  kind: number;
  statusCode: number;
}

/**
 * Why the span must be rejected, or `undefined` when it is acceptable: trace id 16 bytes
 * and not all zero, span id 8 bytes and not all zero, parent id empty or 8 bytes, end not
 * before start, kind and status code within their enums (a value outside cannot be
 * represented in {@link Span}, and guessing one would misreport the span).
 */
export function spanProblem(span: SpanIdentity): string | undefined {
  const { traceId, spanId, parentSpanId } = span;
  if (traceId.length !== 32) return `trace id must be 16 bytes, got ${traceId.length / 2}`;
  if (traceId === zeroTraceId) return 'trace id is all zero';
  if (spanId.length !== 16) return `span id must be 8 bytes, got ${spanId.length / 2}`;
  if (spanId === zeroSpanId) return 'span id is all zero';
  if (parentSpanId.length !== 0 && parentSpanId.length !== 16) {
    return `parent span id must be empty or 8 bytes, got ${parentSpanId.length / 2}`;
  }
  if (span.endTimeUnixNano < span.startTimeUnixNano) {
    return `end time ${span.endTimeUnixNano} is before start time ${span.startTimeUnixNano}`;
  }
  if (!(span.kind >= 0 && span.kind <= 5 && Number.isInteger(span.kind))) return `kind ${span.kind} is not a SpanKind (0..5)`;
  if (!(span.statusCode >= 0 && span.statusCode <= 2 && Number.isInteger(span.statusCode))) {
    return `status code ${span.statusCode} is not a StatusCode (0..2)`;
  }
  return undefined;
}
