/**
 * Decoder for OTLP/JSON trace requests: the protobuf JSON mapping of
 * `ExportTraceServiceRequest` with OTLP's exceptions (ids as hex, enums as integers).
 * It yields the same {@link Span}s as the protobuf decoder for the same request.
 */
import type { DecodeError } from '../../errors.ts';
import { maxAnyValueDepth } from './any-value.ts';
import { normalizeHexId } from './hex.ts';
import { decodeAttributesInto } from './json-any-value.ts';
import { decodeJsonExportRequest, decodeJsonText, jsonExportSchema } from './json-export.ts';
import {
  type Cursor,
  decimalInteger,
  estimateOverheadChars,
  fail,
  field,
  isObject,
  type JsonObject,
  list,
  message,
  optionalString,
  typeName,
} from './json-walk.ts';
import type { Attributes, DecodedRequest, Span, SpanEvent, SpanKind, SpanLink, StatusCode } from '../span.ts';
import { spanProblem } from './span-validation.ts';

/**
 * Decodes an OTLP/JSON trace request body.
 *
 * Accepts lowerCamelCase keys and the proto snake_case names, hex ids in either case,
 * int64 as decimal strings or numbers, enums as integers or their proto names, base64 (or
 * base64url) `bytesValue`; unknown fields are ignored. A span failing the per-span checks
 * lands in `rejected` with its reason (OTLP partial success). A body that is not JSON or
 * not shaped like a request (a list that is not an array, an unparsable number, AnyValue
 * nested deeper than {@link maxAnyValueDepth}) yields a {@link DecodeError} naming the
 * path; this function does not throw on bad input.
 *
 * `encodedBytes` is an estimate, since the span's own text is gone after parsing: the
 * lengths of the span's strings plus a fixed allowance per value for JSON punctuation and
 * keys (see {@link estimateOverheadChars}).
 */
export function decodeOtlpJson(text: string): DecodedRequest | DecodeError {
  return decodeJsonText(text, decodeOtlpJsonValue);
}

/** Like {@link decodeOtlpJson}, for a request that is already parsed (e.g. a Kafka `otlp_json` record). */
export function decodeOtlpJsonValue(request: unknown): DecodedRequest | DecodeError {
  return decodeJsonExportRequest(request, TRACES, { spans: [], rejected: [] });
}

const TRACES = jsonExportSchema<DecodedRequest>('Spans', decodeScopeSpans);

function decodeScopeSpans(cursor: Cursor, scopeSpans: JsonObject, resource: Attributes, out: DecodedRequest): void {
  const path = cursor.path;
  const scope = decodeScope(cursor, field(scopeSpans, 'scope', 'scope'));
  const spans = list(cursor, scopeSpans, 'spans', 'spans');
  for (let k = 0; k < spans.length; k++) {
    cursor.path = `${path}.spans[${k}]`;
    decodeSpan(cursor, message(cursor, spans[k], 'Span'), resource, scope, out);
  }
}

function decodeScope(cursor: Cursor, value: unknown): Span['scope'] {
  if (value === undefined || value === null) return { name: '' };
  const scope = message(cursor, value, 'InstrumentationScope');
  const name = optionalString(cursor, scope.name, 'scope.name');
  const version = optionalString(cursor, scope.version, 'scope.version');
  return version === '' ? { name } : { name, version };
}

const spanKindNames: Record<string, SpanKind> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};

const statusCodeNames: Record<string, StatusCode> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

/** An enum given as an integer or a proto name; an unknown name or a non-integer is NaN, which span validation rejects. */
function enumNumber(value: unknown, names: Record<string, number>): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Object.hasOwn(names, value) ? names[value]! : Number.NaN;
  return Number.NaN;
}

/** An id field as lower-case hex; `undefined` when it is not hex (shared with the logs decoder). */
export function hexId(cursor: Cursor, value: unknown, what: string): string | undefined {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') fail(cursor, `${what} must be a hex string, got ${typeName(value)}`);
  return normalizeHexId(value);
}

function decodeSpan(cursor: Cursor, span: JsonObject, resource: Attributes, scope: Span['scope'], out: DecodedRequest): void {
  cursor.chars = estimateOverheadChars.perSpan;
  const traceId = hexId(cursor, field(span, 'traceId', 'trace_id'), 'traceId');
  const spanId = hexId(cursor, field(span, 'spanId', 'span_id'), 'spanId');
  const parentSpanId = hexId(cursor, field(span, 'parentSpanId', 'parent_span_id'), 'parentSpanId');
  const name = optionalString(cursor, span.name, 'name');
  cursor.chars += name.length;
  const kindValue = span.kind;
  const kind = enumNumber(kindValue, spanKindNames);
  const startTimeUnixNano = uint64(cursor, field(span, 'startTimeUnixNano', 'start_time_unix_nano'), 'startTimeUnixNano');
  const endTimeUnixNano = uint64(cursor, field(span, 'endTimeUnixNano', 'end_time_unix_nano'), 'endTimeUnixNano');

  const attributes: Attributes = {};
  decodeAttributesInto(cursor, span, 'attributes', 'attributes', attributes);
  const events = list(cursor, span, 'events', 'events').map((event) => decodeEvent(cursor, event));
  const links: SpanLink[] = [];
  let linkProblem: string | undefined;
  for (const value of list(cursor, span, 'links', 'links')) {
    const link = decodeLink(cursor, value);
    if (link === undefined) linkProblem = `link ${links.length} has an id that is not hex`;
    else links.push(link);
  }

  let statusCode = 0;
  let statusMessage = '';
  const statusValue = span.status;
  if (statusValue !== undefined && statusValue !== null) {
    const status = message(cursor, statusValue, 'status');
    statusCode = enumNumber(status.code, statusCodeNames);
    statusMessage = optionalString(cursor, status.message, 'status.message');
    cursor.chars += statusMessage.length;
  }

  const problem =
    (traceId === undefined ? 'trace id is not hex' : undefined) ??
    (spanId === undefined ? 'span id is not hex' : undefined) ??
    (parentSpanId === undefined ? 'parent span id is not hex' : undefined) ??
    (Number.isNaN(kind) ? `kind ${JSON.stringify(kindValue)} is not a SpanKind (0..5)` : undefined) ??
    (Number.isNaN(statusCode) ? `status code ${JSON.stringify(isObject(statusValue) ? statusValue.code : null)} is not a StatusCode (0..2)` : undefined) ??
    linkProblem ??
    spanProblem({
      traceId: traceId!,
      spanId: spanId!,
      parentSpanId: parentSpanId!,
      startTimeUnixNano,
      endTimeUnixNano,
      kind,
      statusCode,
    });
  if (problem !== undefined) {
    out.rejected.push({
      ...(traceId ? { traceId } : {}),
      ...(spanId ? { spanId } : {}),
      reason: problem,
    });
    return;
  }
  out.spans.push({
    traceId: traceId!,
    spanId: spanId!,
    ...(parentSpanId === '' ? {} : { parentSpanId: parentSpanId! }),
    name,
    kind: kind as SpanKind,
    startTimeUnixNano,
    endTimeUnixNano,
    status: statusMessage === '' ? { code: statusCode as StatusCode } : { code: statusCode as StatusCode, message: statusMessage },
    attributes,
    events,
    links,
    resource,
    scope,
    encodedBytes: cursor.chars,
  });
}

function decodeEvent(cursor: Cursor, value: unknown): SpanEvent {
  const event = message(cursor, value, 'event');
  const name = optionalString(cursor, event.name, 'event name');
  cursor.chars += name.length + estimateOverheadChars.perValue;
  const timeUnixNano = uint64(cursor, field(event, 'timeUnixNano', 'time_unix_nano'), 'event timeUnixNano');
  const attributes: Attributes = {};
  decodeAttributesInto(cursor, event, 'attributes', 'attributes', attributes);
  return { name, timeUnixNano, attributes };
}

/** `undefined` when an id is not hex (the span is then rejected). */
function decodeLink(cursor: Cursor, value: unknown): SpanLink | undefined {
  const link = message(cursor, value, 'link');
  const traceId = hexId(cursor, field(link, 'traceId', 'trace_id'), 'link traceId');
  const spanId = hexId(cursor, field(link, 'spanId', 'span_id'), 'link spanId');
  cursor.chars += 48 + estimateOverheadChars.perValue;
  const attributes: Attributes = {};
  decodeAttributesInto(cursor, link, 'attributes', 'attributes', attributes);
  if (traceId === undefined || spanId === undefined) return undefined;
  return { traceId, spanId, attributes };
}

const maxUint64 = 2n ** 64n - 1n;

/** A uint64 field (times) given as a decimal string or a number (shared with the logs decoder). */
export function uint64(cursor: Cursor, value: unknown, what: string): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) fail(cursor, `${what} ${value} is not a non-negative integer`);
    return BigInt(value);
  }
  if (typeof value !== 'string' || !decimalInteger.test(value) || value.startsWith('-')) {
    fail(cursor, `${what} ${JSON.stringify(value)} is not a non-negative decimal integer`);
  }
  const big = BigInt(value);
  if (big > maxUint64) fail(cursor, `${what} ${value} is outside uint64`);
  return big;
}
