/**
 * Decoder for OTLP/JSON logs requests (`ExportLogsServiceRequest` in the protobuf JSON
 * mapping with OTLP's exceptions: hex ids, int64 as strings or numbers). It yields the same
 * {@link LogRecord}s as the protobuf decoder for the same request, and shares the trace JSON
 * decoder's walk and AnyValue mapping.
 */
import type { DecodeError } from '../../errors.ts';
import { pushLogRecord, type DecodedLogsRequest } from '../log-record.ts';
import { decodeAnyValue, decodeAttributesInto } from './json-any-value.ts';
import { hexId, uint64 } from './json-decode.ts';
import { decodeJsonExportRequest, decodeJsonText, jsonExportSchema } from './json-export.ts';
import { type Cursor, estimateOverheadChars, field, type JsonObject, list, message, optionalString } from './json-walk.ts';
import type { Attributes, AttrValue } from '../span.ts';

/** Decodes an OTLP/JSON logs request body; bad input is a returned {@link DecodeError}, never a throw. */
export function decodeOtlpLogsJson(text: string): DecodedLogsRequest | DecodeError {
  return decodeJsonText(text, decodeOtlpLogsJsonValue);
}

/** Like {@link decodeOtlpLogsJson}, for a request that is already parsed (a recorded file's line). */
export function decodeOtlpLogsJsonValue(request: unknown): DecodedLogsRequest | DecodeError {
  return decodeJsonExportRequest(request, LOGS, { logs: [], rejected: [] });
}

const LOGS = jsonExportSchema<DecodedLogsRequest>('Logs', decodeScopeLogs);

function decodeScopeLogs(cursor: Cursor, scopeLogs: JsonObject, resource: Attributes, out: DecodedLogsRequest): void {
  const path = cursor.path;
  const records = list(cursor, scopeLogs, 'logRecords', 'log_records');
  for (let k = 0; k < records.length; k++) {
    cursor.path = `${path}.logRecords[${k}]`;
    decodeLogRecord(cursor, message(cursor, records[k], 'LogRecord'), resource, out);
  }
}

function decodeLogRecord(cursor: Cursor, record: JsonObject, resource: Attributes, out: DecodedLogsRequest): void {
  cursor.chars = estimateOverheadChars.perSpan;
  const traceId = hexId(cursor, field(record, 'traceId', 'trace_id'), 'traceId');
  const spanId = hexId(cursor, field(record, 'spanId', 'span_id'), 'spanId');
  const eventName = optionalString(cursor, field(record, 'eventName', 'event_name'), 'eventName');
  cursor.chars += eventName.length;
  const time = uint64(cursor, field(record, 'timeUnixNano', 'time_unix_nano'), 'timeUnixNano');
  const observed = uint64(cursor, field(record, 'observedTimeUnixNano', 'observed_time_unix_nano'), 'observedTimeUnixNano');
  const attributes: Attributes = {};
  decodeAttributesInto(cursor, record, 'attributes', 'attributes', attributes);
  const bodyValue = record.body;
  const body: AttrValue | undefined = bodyValue === undefined || bodyValue === null ? undefined : decodeAnyValue(cursor, bodyValue, 'body', 0);

  const invalid = traceId === undefined ? 'trace id is not hex' : spanId === undefined ? 'span id is not hex' : undefined;
  const fields = { eventName, timeUnixNano: time, observedTimeUnixNano: observed, attributes, body, resource, encodedBytes: cursor.chars };
  pushLogRecord(out, { ...fields, traceId: traceId ?? '', spanId: spanId ?? '' }, invalid);
}
