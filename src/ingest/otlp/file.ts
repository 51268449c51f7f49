import { TextSource } from '../long-text.ts';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DecodeError } from '../../errors.ts';
import type { DecodedLogsRequest } from '../log-record.ts';
import { decodeOtlpJsonValue } from './json-decode.ts';
import { decodeOtlpLogsJsonValue } from './json-logs-decode.ts';
import { isObject } from './json-walk.ts';
import { decodeOtlpLogsProto } from './proto-logs-decode.ts';
import { decodeOtlpProto } from './proto-decode.ts';
import type { DecodedRequest } from '../span.ts';

/** Cap on a recorded file after decompression: the same order as the receiver's body cap. */
export const MAX_RECORDED_FILE_BYTES = 1024 * 1024 * 1024;

/** One recorded export request: traces, or logs (GenAI content events). */
export type RecordedRequest = { signal: 'traces'; request: DecodedRequest } | { signal: 'logs'; request: DecodedLogsRequest };

/**
 * Reads one recorded OTLP file: gzip or not (by its magic bytes), then OTLP/JSON (one request,
 * or one per line as the Collector's file exporter writes) when it starts with `{`, else one
 * protobuf request. A JSON request with `resourceLogs` is a logs request (the Collector writes
 * each signal to its own file). A protobuf body does not name its message: it is decoded as a
 * traces request, and as a logs request when that fails (a LogRecord's fields do not parse as
 * a Span's: field 1 is a fixed64 time there, a bytes id here), logs first when the file name
 * says `logs`.
 */
export async function readOtlpFile(path: string): Promise<RecordedRequest[] | DecodeError> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes, { maxOutputLength: MAX_RECORDED_FILE_BYTES });
  } catch (err) {
    return new DecodeError(`cannot read: ${(err as Error).message}`, { cause: err });
  }
  const first = bytes.findIndex((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
  if (first === -1) return [];
  if (bytes[first] !== 0x7b) {
    // A file named as JSON, or JSON that is not an object, is not protobuf: say what it is not.
    if (JSON_NAME.test(basename(path)) || bytes[first] === 0x5b) {
      return new DecodeError(`not OTLP/JSON: it starts with ${JSON.stringify(bytes.toString('utf8', first, first + 12))}; ${OTLP_JSON_SHAPE}`);
    }
    const decoded = decodeProtoRequest(bytes, /logs/i.test(basename(path)));
    if (decoded instanceof DecodeError && looksLikeText(bytes)) {
      return new DecodeError(`not OTLP: it reads as text, neither OTLP/JSON (${OTLP_JSON_SHAPE}) nor OTLP protobuf`, { cause: decoded });
    }
    return decoded instanceof DecodeError ? decoded : [decoded];
  }
  const text = bytes.toString('utf8');
  const whole = decodeJsonRequest(text);
  if (!(whole instanceof DecodeError)) return [whole];
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length < 2) return whole;
  const requests: RecordedRequest[] = [];
  for (const [i, line] of lines.entries()) {
    const decoded = decodeJsonRequest(line);
    if (decoded instanceof DecodeError) return new DecodeError(`line ${i + 1}: ${decoded.message}`, { cause: decoded });
    requests.push(decoded);
  }
  return requests;
}

const JSON_NAME = /\.(json|jsonl|ndjson)(\.gz)?$/i;
const OTLP_JSON_SHAPE = 'an OTLP/JSON file is an export request object, {"resourceSpans": [...]} or {"resourceLogs": [...]}, or one per line';

/** Whether the first bytes are printable text (tabs and line ends allowed): protobuf's field tags are not. */
function looksLikeText(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 256);
  return head.length > 0 && head.every((b) => b === 0x09 || b === 0x0a || b === 0x0d || (b >= 0x20 && b < 0x7f) || b >= 0x80);
}

function decodeProtoRequest(bytes: Buffer, logsFirst: boolean): RecordedRequest | DecodeError {
  const asTraces = (): RecordedRequest | DecodeError => {
    // Long texts stay in the file's bytes until a closed trajectory reads them (as `serve` keeps them in the WAL).
    const traces = decodeOtlpProto(bytes, new TextSource(bytes));
    return traces instanceof DecodeError ? traces : { signal: 'traces', request: traces };
  };
  const asLogs = (): RecordedRequest | DecodeError => {
    const logs = decodeOtlpLogsProto(bytes);
    return logs instanceof DecodeError ? logs : { signal: 'logs', request: logs };
  };
  const [first, second] = logsFirst ? [asLogs, asTraces] : [asTraces, asLogs];
  const decoded = first();
  if (!(decoded instanceof DecodeError)) return decoded;
  const other = second();
  return other instanceof DecodeError ? decoded : other;
}

const OTLP_KEYS = ['resourceSpans', 'resource_spans', 'resourceLogs', 'resource_logs'];

function decodeJsonRequest(text: string): RecordedRequest | DecodeError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return new DecodeError(`body is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  // Another JSON object (a config, a finding) is not an empty export: name what it has.
  if (isObject(parsed) && Object.keys(parsed).length > 0 && !OTLP_KEYS.some((k) => k in parsed)) {
    return new DecodeError(
      `not OTLP/JSON: an object with ${Object.keys(parsed)
        .slice(0, 5)
        .map((k) => JSON.stringify(k))
        .join(', ')} and no resourceSpans or resourceLogs; ${OTLP_JSON_SHAPE}`,
    );
  }
  if (isObject(parsed) && (parsed['resourceLogs'] !== undefined || parsed['resource_logs'] !== undefined)) {
    const logs = decodeOtlpLogsJsonValue(parsed);
    return logs instanceof DecodeError ? logs : { signal: 'logs', request: logs };
  }
  const traces = decodeOtlpJsonValue(parsed);
  return traces instanceof DecodeError ? traces : { signal: 'traces', request: traces };
}
