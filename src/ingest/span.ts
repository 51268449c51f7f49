import type { LongText, TextSource } from './long-text.ts';

/**
 * The internal span: what every decoder (OTLP protobuf, OTLP JSON, Kafka records) produces.
 * Ids are lower-case hex; times are nanoseconds since the epoch as bigint (never a lossy float).
 */

/**
 * An attribute value, decoded from an OTLP AnyValue.
 * - `intValue` becomes a number when it is a safe integer, otherwise its decimal string;
 * - `bytesValue` becomes its base64 text;
 * - `kvlistValue` becomes a plain object, `arrayValue` an array;
 * - an AnyValue with no value set becomes `null`;
 * - a string value of a span or span event attribute (not one inside an array or kvlist) of
 *   at least `lazyTextMinBytes`, decoded from
 *   protobuf with a text source, stays a {@link LongText}: its bytes by reference, decoded
 *   when read (`textOf`). Readers of content take both.
 */
export type AttrValue = string | LongText | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };

export type Attributes = Record<string, AttrValue>;

/** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
export type SpanKind = 0 | 1 | 2 | 3 | 4 | 5;

/** OTLP status code: 0 unset, 1 ok, 2 error. */
export type StatusCode = 0 | 1 | 2;

export interface SpanEvent {
  name: string;
  timeUnixNano: bigint;
  attributes: Attributes;
}

export interface SpanLink {
  traceId: string;
  spanId: string;
  attributes: Attributes;
}

export interface Span {
  traceId: string;
  spanId: string;
  /** Absent for a root span (OTLP sends an empty parent id). */
  parentSpanId?: string;
  name: string;
  kind: SpanKind;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  status: { code: StatusCode; message?: string };
  attributes: Attributes;
  events: SpanEvent[];
  links: SpanLink[];
  /** Shared by every span of one ResourceSpans: treat as read-only. */
  resource: Attributes;
  scope: { name: string; version?: string };
  /**
   * Size of this span's encoding in the request, in bytes (protobuf) or characters (JSON):
   * what the assembler charges against its buffered-bytes bound.
   */
  encodedBytes: number;
}

/** A span the decoder refused while keeping the rest of the request (OTLP partial success). */
export interface RejectedSpan {
  traceId?: string;
  spanId?: string;
  reason: string;
}

/** What decoding one ExportTraceServiceRequest yields. */
export interface DecodedRequest {
  spans: Span[];
  rejected: RejectedSpan[];
  /** Where the request's `LongText` values live, when it was decoded with a text source. */
  texts?: TextSource;
}
