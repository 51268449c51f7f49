/**
 * Decoder for OTLP/protobuf trace requests (`ExportTraceServiceRequest`), hand-written over
 * the trace schema: it builds {@link Span}s directly from the wire bytes without an
 * intermediate message tree. bench/decode.ts compares it with protobufjs.
 */
import type { DecodeError } from '../../errors.ts';
import type { maxAnyValueDepth } from './any-value.ts';
import { decodeKeyValueInto } from './proto-any-value.ts';
import { decodeExportRequest, exportRequestSchema } from './proto-export.ts';
import { type ProtoReader, wireFixed32, wireFixed64, wireLen, wireVarint } from './proto-reader.ts';
import type { Attributes, DecodedRequest, SpanEvent, SpanKind, SpanLink, StatusCode } from '../span.ts';
import { spanProblem } from './span-validation.ts';

/**
 * Decodes an OTLP `ExportTraceServiceRequest` protobuf body into spans.
 *
 * A span failing the per-span checks (ids, times, enum ranges) lands in `rejected` with its
 * reason and the rest is kept (OTLP partial success). A body that is not a well-formed
 * request (truncated, wrong wire type, AnyValue nested deeper than
 * {@link maxAnyValueDepth}) yields a {@link DecodeError}; this function does not throw on
 * bad input. An empty body is a valid request with no spans. `encodedBytes` of each span is
 * the length of its Span message (without the enclosing tag and length prefix).
 *
 * @example
 * const result = decodeOtlpProto(body);
 * if (result instanceof DecodeError) return badRequest(result.message);
 */
export function decodeOtlpProto(body: Uint8Array): DecodedRequest | DecodeError {
  return decodeExportRequest(body, TRACES, { spans: [], rejected: [] });
}

const TRACES = exportRequestSchema<DecodedRequest>('ExportTraceServiceRequest', 'Spans', decodeScopeSpans);

export interface Scope {
  name: string;
  version?: string;
}

function decodeScopeSpans(r: ProtoReader, end: number, resource: Attributes, out: DecodedRequest): void {
  const scope: Scope = { name: '' };
  while (r.pos < end) {
    const field = r.readField();
    if (field === 2) {
      const spanEnd = r.expect('ScopeSpans', field, wireLen).readLengthEnd();
      decodeSpan(r, spanEnd, resource, scope, out);
      r.expectEnd('Span', spanEnd);
    } else if (field === 1) {
      const scopeEnd = r.expect('ScopeSpans', field, wireLen).readLengthEnd();
      decodeScope(r, scopeEnd, scope);
      r.expectEnd('InstrumentationScope', scopeEnd);
    } else {
      r.skipField(field);
    }
  }
}

/** Reads an InstrumentationScope's name and version into `scope`. */
function decodeScope(r: ProtoReader, end: number, scope: Scope): void {
  while (r.pos < end) {
    const field = r.readField();
    if (field === 1) {
      scope.name = r.expect('InstrumentationScope', field, wireLen).readString();
    } else if (field === 2) {
      const version = r.expect('InstrumentationScope', field, wireLen).readString();
      if (version === '') delete scope.version;
      else scope.version = version;
    } else {
      r.skipField(field); // scope attributes are not part of Span
    }
  }
}

function decodeSpan(r: ProtoReader, end: number, resource: Attributes, scope: Scope, out: DecodedRequest): void {
  const start = r.pos;
  let traceId = '';
  let spanId = '';
  let parentSpanId = '';
  let name = '';
  let kind = 0;
  let startTimeUnixNano = 0n;
  let endTimeUnixNano = 0n;
  const attributes: Attributes = {};
  const events: SpanEvent[] = [];
  const links: SpanLink[] = [];
  let statusCode = 0;
  let statusMessage = '';
  while (r.pos < end) {
    const field = r.readField();
    switch (field) {
      case 1:
        traceId = r.expect('Span', field, wireLen).readRepeatedHex(r.traceIdMemo);
        break;
      case 2:
        spanId = r.expect('Span', field, wireLen).readHex();
        break;
      case 4:
        parentSpanId = r.expect('Span', field, wireLen).readRepeatedHex(r.parentIdMemo);
        break;
      case 5:
        name = r.expect('Span', field, wireLen).readString();
        break;
      case 6:
        kind = r.expect('Span', field, wireVarint).readVarint();
        break;
      case 7:
        startTimeUnixNano = r.expect('Span', field, wireFixed64).readFixed64();
        break;
      case 8:
        endTimeUnixNano = r.expect('Span', field, wireFixed64).readFixed64();
        break;
      case 9:
        r.expect('Span', field, wireLen);
        decodeKeyValueInto(r, attributes, 0);
        break;
      case 11:
        r.expect('Span', field, wireLen);
        events.push(decodeEvent(r));
        break;
      case 13:
        r.expect('Span', field, wireLen);
        links.push(decodeLink(r));
        break;
      case 15: {
        // Two Status fields merge, as protobuf merges a repeated singular message.
        const statusEnd = r.expect('Span', field, wireLen).readLengthEnd();
        while (r.pos < statusEnd) {
          const statusField = r.readField();
          if (statusField === 2) statusMessage = r.expect('Status', statusField, wireLen).readString();
          else if (statusField === 3) statusCode = r.expect('Status', statusField, wireVarint).readVarint();
          else r.skipField(statusField);
        }
        r.expectEnd('Status', statusEnd);
        break;
      }
      case 16:
        r.expect('Span', field, wireFixed32);
        r.skipField(field);
        break;
      default:
        // 3 trace_state, 10/12/14 dropped counts and unknown fields are not carried by Span
        r.skipField(field);
    }
  }

  const problem = spanProblem({ traceId, spanId, parentSpanId, startTimeUnixNano, endTimeUnixNano, kind, statusCode });
  if (problem !== undefined) {
    out.rejected.push({
      ...(traceId === '' ? {} : { traceId }),
      ...(spanId === '' ? {} : { spanId }),
      reason: problem,
    });
    return;
  }
  const status = statusMessage === '' ? { code: statusCode as StatusCode } : { code: statusCode as StatusCode, message: statusMessage };
  // Two literals rather than a spread: same keys in the same order, without a copy per span.
  out.spans.push(
    parentSpanId === ''
      ? {
          traceId,
          spanId,
          name,
          kind: kind as SpanKind,
          startTimeUnixNano,
          endTimeUnixNano,
          status,
          attributes,
          events,
          links,
          resource,
          scope,
          encodedBytes: end - start,
        }
      : {
          traceId,
          spanId,
          parentSpanId,
          name,
          kind: kind as SpanKind,
          startTimeUnixNano,
          endTimeUnixNano,
          status,
          attributes,
          events,
          links,
          resource,
          scope,
          encodedBytes: end - start,
        },
  );
}

function decodeEvent(r: ProtoReader): SpanEvent {
  const end = r.readLengthEnd();
  let timeUnixNano = 0n;
  let name = '';
  const attributes: Attributes = {};
  while (r.pos < end) {
    const field = r.readField();
    if (field === 1) {
      timeUnixNano = r.expect('Span.Event', field, wireFixed64).readFixed64();
    } else if (field === 2) {
      name = r.expect('Span.Event', field, wireLen).readString();
    } else if (field === 3) {
      r.expect('Span.Event', field, wireLen);
      decodeKeyValueInto(r, attributes, 0);
    } else {
      r.skipField(field);
    }
  }
  r.expectEnd('Span.Event', end);
  return { name, timeUnixNano, attributes };
}

function decodeLink(r: ProtoReader): SpanLink {
  const end = r.readLengthEnd();
  let traceId = '';
  let spanId = '';
  const attributes: Attributes = {};
  while (r.pos < end) {
    const field = r.readField();
    if (field === 1) {
      traceId = r.expect('Span.Link', field, wireLen).readHex();
    } else if (field === 2) {
      spanId = r.expect('Span.Link', field, wireLen).readHex();
    } else if (field === 4) {
      r.expect('Span.Link', field, wireLen);
      decodeKeyValueInto(r, attributes, 0);
    } else {
      r.skipField(field);
    }
  }
  r.expectEnd('Span.Link', end);
  return { traceId, spanId, attributes };
}
