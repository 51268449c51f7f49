/** An OTLP request body in either content type, decoded by its signal's decoder. */
import type { DecodeError } from '../../errors.ts';
import type { DecodedLogsRequest } from '../log-record.ts';
import type { DecodedRequest } from '../span.ts';
import { decodeOtlpJson } from './json-decode.ts';
import { decodeOtlpLogsJson } from './json-logs-decode.ts';
import { decodeOtlpLogsProto } from './proto-logs-decode.ts';
import { decodeOtlpProto } from './proto-decode.ts';

export type BodyFormat = 'protobuf' | 'json';

/** A traces request body (`ExportTraceServiceRequest`, protobuf or JSON). */
export function decodeTracesBody(format: BodyFormat, body: Buffer): DecodedRequest | DecodeError {
  return format === 'protobuf' ? decodeOtlpProto(body) : decodeOtlpJson(body.toString('utf8'));
}

/** A logs request body (`ExportLogsServiceRequest`, protobuf or JSON). */
export function decodeLogsBody(format: BodyFormat, body: Buffer): DecodedLogsRequest | DecodeError {
  return format === 'protobuf' ? decodeOtlpLogsProto(body) : decodeOtlpLogsJson(body.toString('utf8'));
}
