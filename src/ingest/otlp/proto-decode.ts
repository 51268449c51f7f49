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
import type { TextSource } from '../long-text.ts';
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
 * the length of its Span message (without the enclosing tag and length prefix). With `texts`
 * (the body's {@link TextSource}), long string values of spans and span events stay
 * `LongText`s over the body's bytes and `texts` rides on the result, for the WAL to move.
 *
 * @example
 * const result = decodeOtlpProto(body);
 * if (result instanceof DecodeError) return badRequest(result.message);
 */
export function decodeOtlpProto(body: Uint8Array, texts?: TextSource): DecodedRequest | DecodeError {
  const out: DecodedRequest = texts === undefined ? { spans: [], rejected: [] } : { spans: [], rejected: [], texts };
  return decodeExportRequest(body, TRACES, out, texts);
}

const TRACES = exportRequestSchema<DecodedRequest>('ExportTraceServiceRequest', 'Spans', decodeScopeSpans);

export interface Scope {
  name: string;
  version?: string;
}

function decodeScopeSpans(r: ProtoReader, end: number, resource: Attributes, out: DecodedRequest): void {
  const scope: Scope = { name: '' };
  while (r.pos < end) {
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 2) {
      r.expectWireType('ScopeSpans', field, wireType, wireLen);
      const spanEnd = r.readLengthEnd();
      decodeSpan(r, spanEnd, resource, scope, out);
      r.expectEnd('Span', spanEnd);
    } else if (field === 1) {
      r.expectWireType('ScopeSpans', field, wireType, wireLen);
      const scopeEnd = r.readLengthEnd();
      decodeScope(r, scopeEnd, scope);
      r.expectEnd('InstrumentationScope', scopeEnd);
    } else {
      r.skip(wireType, field);
    }
  }
}

/** Reads an InstrumentationScope's name and version into `scope`. */
function decodeScope(r: ProtoReader, end: number, scope: Scope): void {
  while (r.pos < end) {
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1) {
      r.expectWireType('InstrumentationScope', field, wireType, wireLen);
      scope.name = r.readString();
    } else if (field === 2) {
      r.expectWireType('InstrumentationScope', field, wireType, wireLen);
      const version = r.readString();
      if (version === '') delete scope.version;
      else scope.version = version;
    } else {
      r.skip(wireType, field); // scope attributes are not part of Span
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
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    switch (field) {
      case 1:
        r.expectWireType('Span', field, wireType, wireLen);
        traceId = r.readRepeatedHex(r.traceIdMemo);
        break;
      case 2:
        r.expectWireType('Span', field, wireType, wireLen);
        spanId = r.readHex();
        break;
      case 4:
        r.expectWireType('Span', field, wireType, wireLen);
        parentSpanId = r.readRepeatedHex(r.parentIdMemo);
        break;
      case 5:
        r.expectWireType('Span', field, wireType, wireLen);
        name = r.readString();
        break;
      case 6:
        r.expectWireType('Span', field, wireType, wireVarint);
        kind = r.readVarint();
        break;
      case 7:
        r.expectWireType('Span', field, wireType, wireFixed64);
        startTimeUnixNano = r.readFixed64();
        break;
      case 8:
        r.expectWireType('Span', field, wireType, wireFixed64);
        endTimeUnixNano = r.readFixed64();
        break;
      case 9:
        r.expectWireType('Span', field, wireType, wireLen);
        r.lazyText = true;
        decodeKeyValueInto(r, attributes, 0);
        r.lazyText = false;
        break;
      case 11:
        r.expectWireType('Span', field, wireType, wireLen);
        events.push(decodeEvent(r));
        break;
      case 13:
        r.expectWireType('Span', field, wireType, wireLen);
        links.push(decodeLink(r));
        break;
      case 15: {
        r.expectWireType('Span', field, wireType, wireLen);
        const statusEnd = r.readLengthEnd();
        while (r.pos < statusEnd) {
          const statusTag = r.readTag();
          const statusField = statusTag >>> 3;
          const statusWireType = statusTag & 7;
          if (statusField === 2) {
            r.expectWireType('Status', statusField, statusWireType, wireLen);
            statusMessage = r.readString();
          } else if (statusField === 3) {
            r.expectWireType('Status', statusField, statusWireType, wireVarint);
            statusCode = r.readVarint();
          } else {
            r.skip(statusWireType, statusField);
          }
        }
        r.expectEnd('Status', statusEnd);
        break;
      }
      case 16:
        r.expectWireType('Span', field, wireType, wireFixed32);
        r.skip(wireType, field);
        break;
      default:
        // 3 trace_state, 10/12/14 dropped counts and unknown fields are not carried by Span
        r.skip(wireType, field);
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
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1) {
      r.expectWireType('Span.Event', field, wireType, wireFixed64);
      timeUnixNano = r.readFixed64();
    } else if (field === 2) {
      r.expectWireType('Span.Event', field, wireType, wireLen);
      name = r.readString();
    } else if (field === 3) {
      r.expectWireType('Span.Event', field, wireType, wireLen);
      r.lazyText = true;
      decodeKeyValueInto(r, attributes, 0);
      r.lazyText = false;
    } else {
      r.skip(wireType, field);
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
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1) {
      r.expectWireType('Span.Link', field, wireType, wireLen);
      traceId = r.readHex();
    } else if (field === 2) {
      r.expectWireType('Span.Link', field, wireType, wireLen);
      spanId = r.readHex();
    } else if (field === 4) {
      r.expectWireType('Span.Link', field, wireType, wireLen);
      decodeKeyValueInto(r, attributes, 0);
    } else {
      r.skip(wireType, field);
    }
  }
  r.expectEnd('Span.Link', end);
  return { traceId, spanId, attributes };
}
