/**
 * The internal log record: what the OTLP logs decoders produce. Only what the GenAI content
 * join reads is kept: trace context, the event name, time, attributes and body.
 */
import type { Attributes, AttrValue } from './span.ts';

export interface LogRecord {
  /** Lower-case hex; absent when the record names no trace (empty or all-zero id). */
  traceId?: string;
  /** Lower-case hex; absent when the record names no span. */
  spanId?: string;
  /** `LogRecord.event_name` (field 12); `''` when unset (older SDKs write the `event.name` attribute). */
  eventName: string;
  /** `time_unix_nano`, else `observed_time_unix_nano`; 0 when neither is set. */
  timeUnixNano: bigint;
  attributes: Attributes;
  /** The body AnyValue; absent when the record has none. */
  body?: AttrValue;
  /** Shared by every record of one ResourceLogs: read-only. */
  resource: Attributes;
  /** Size of its encoding in the request (protobuf bytes, or a JSON estimate): charged to the assembler's byte bound. */
  encodedBytes: number;
}

/** A record the decoder refused while keeping the rest of the request (OTLP partial success). */
export interface RejectedLogRecord {
  traceId?: string;
  spanId?: string;
  reason: string;
}

/** What decoding one ExportLogsServiceRequest yields. */
export interface DecodedLogsRequest {
  logs: LogRecord[];
  rejected: RejectedLogRecord[];
}

const zeroTraceId = '0'.repeat(32);
const zeroSpanId = '0'.repeat(16);

/**
 * The trace context of a record, or why it must be rejected: ids are optional on a log record
 * (empty or all-zero means none), but one that is present must have its proper length.
 */
export function logContext(traceId: string, spanId: string): { traceId?: string; spanId?: string } | string {
  if (traceId.length !== 0 && traceId.length !== 32) return `trace id must be empty or 16 bytes, got ${traceId.length / 2}`;
  if (spanId.length !== 0 && spanId.length !== 16) return `span id must be empty or 8 bytes, got ${spanId.length / 2}`;
  const context: { traceId?: string; spanId?: string } = {};
  if (traceId.length === 32 && traceId !== zeroTraceId) context.traceId = traceId;
  if (spanId.length === 16 && spanId !== zeroSpanId) context.spanId = spanId;
  return context;
}

/** One decoded record's fields, before its trace context is checked. */
export interface LogFields {
  traceId: string;
  spanId: string;
  eventName: string;
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  attributes: Attributes;
  body: AttrValue | undefined;
  resource: Attributes;
  encodedBytes: number;
}

/**
 * Adds a decoded record to `out`: as a log record when its trace context is valid (its time
 * the event time, else the observed time), else as a rejection naming the ids it had and why.
 * `invalid`: a reason the decoder already found (ids that are not hex).
 */
export function pushLogRecord(out: DecodedLogsRequest, fields: LogFields, invalid?: string): void {
  const { traceId, spanId } = fields;
  const context = invalid ?? logContext(traceId, spanId);
  if (typeof context === 'string') {
    out.rejected.push({ ...(traceId === '' ? {} : { traceId }), ...(spanId === '' ? {} : { spanId }), reason: context });
    return;
  }
  out.logs.push({
    ...context,
    eventName: fields.eventName,
    timeUnixNano: fields.timeUnixNano === 0n ? fields.observedTimeUnixNano : fields.timeUnixNano,
    attributes: fields.attributes,
    ...(fields.body === undefined ? {} : { body: fields.body }),
    resource: fields.resource,
    encodedBytes: fields.encodedBytes,
  });
}
