/**
 * Decoder for OTLP/protobuf logs requests (`ExportLogsServiceRequest`), hand-written over the
 * logs schema like the trace decoder (`proto-decode.ts`), whose reader, request envelope
 * (`proto-export.ts`) and AnyValue decoding it shares.
 */
import type { DecodeError } from '../../errors.ts';
import { pushLogRecord, type DecodedLogsRequest } from '../log-record.ts';
import { decodeAnyValue, decodeKeyValueInto } from './proto-any-value.ts';
import { decodeExportRequest, exportRequestSchema } from './proto-export.ts';
import { type ProtoReader, wireFixed64, wireLen } from './proto-reader.ts';
import type { Attributes, AttrValue } from '../span.ts';

/**
 * Decodes an OTLP `ExportLogsServiceRequest` protobuf body. A record whose trace or span id
 * has the wrong length lands in `rejected` (OTLP partial success); a record without ids is
 * kept (it names no span). A body that is not a well-formed request yields a
 * {@link DecodeError}; this function does not throw on bad input. `encodedBytes` is the
 * length of the LogRecord message.
 */
export function decodeOtlpLogsProto(body: Uint8Array): DecodedLogsRequest | DecodeError {
  return decodeExportRequest(body, LOGS, { logs: [], rejected: [] });
}

const LOGS = exportRequestSchema<DecodedLogsRequest>('ExportLogsServiceRequest', 'Logs', decodeScopeLogs);

function decodeScopeLogs(r: ProtoReader, end: number, resource: Attributes, out: DecodedLogsRequest): void {
  while (r.pos < end) {
    const tag = r.readTag();
    const field = tag >>> 3;
    if (field === 2) {
      r.expectWireType('ScopeLogs', field, tag & 7, wireLen);
      const recordEnd = r.readLengthEnd();
      decodeLogRecord(r, recordEnd, resource, out);
      r.expectEnd('LogRecord', recordEnd);
    } else {
      r.skip(tag & 7, field); // 1 scope, 3 schema_url: not carried by LogRecord
    }
  }
}

function decodeLogRecord(r: ProtoReader, end: number, resource: Attributes, out: DecodedLogsRequest): void {
  const start = r.pos;
  let time = 0n;
  let observed = 0n;
  let traceId = '';
  let spanId = '';
  let eventName = '';
  let body: AttrValue | undefined;
  const attributes: Attributes = {};
  while (r.pos < end) {
    const tag = r.readTag();
    const field = tag >>> 3;
    const wireType = tag & 7;
    switch (field) {
      case 1:
        r.expectWireType('LogRecord', field, wireType, wireFixed64);
        time = r.readFixed64();
        break;
      case 11:
        r.expectWireType('LogRecord', field, wireType, wireFixed64);
        observed = r.readFixed64();
        break;
      case 5:
        r.expectWireType('LogRecord', field, wireType, wireLen);
        body = decodeAnyValue(r, 0);
        break;
      case 6:
        r.expectWireType('LogRecord', field, wireType, wireLen);
        decodeKeyValueInto(r, attributes, 0);
        break;
      case 9:
        r.expectWireType('LogRecord', field, wireType, wireLen);
        traceId = r.readHex();
        break;
      case 10:
        r.expectWireType('LogRecord', field, wireType, wireLen);
        spanId = r.readHex();
        break;
      case 12:
        r.expectWireType('LogRecord', field, wireType, wireLen);
        eventName = r.readString();
        break;
      default:
        // 2 severity_number, 3 severity_text, 7 dropped count, 8 flags, unknown fields
        r.skip(wireType, field);
    }
  }
  pushLogRecord(out, { traceId, spanId, eventName, timeUnixNano: time, observedTimeUnixNano: observed, attributes, body, resource, encodedBytes: end - start });
}
