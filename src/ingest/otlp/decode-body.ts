/** An OTLP request body in either content type, decoded by its signal's decoder. */
import type { DecodeError } from '../../errors.ts';
import type { DecodedLogsRequest } from '../log-record.ts';
import { TextSource } from '../long-text.ts';
import type { DecodedRequest } from '../span.ts';
import { decodeOtlpJson } from './json-decode.ts';
import { decodeOtlpLogsJson } from './json-logs-decode.ts';
import { decodeOtlpLogsProto } from './proto-logs-decode.ts';
import { decodeOtlpProto } from './proto-decode.ts';

export type BodyFormat = 'protobuf' | 'json';

/**
 * A traces request body (`ExportTraceServiceRequest`, protobuf or JSON). `lazyText`: long
 * values of a protobuf body stay `LongText`s over `body` (see `decodeOtlpProto`); a JSON body's
 * strings are escaped in it, so they are always decoded.
 */
export function decodeTracesBody(format: BodyFormat, body: Buffer, lazyText = false): DecodedRequest | DecodeError {
  if (format === 'protobuf') return decodeOtlpProto(body, lazyText ? new TextSource(body) : undefined);
  return decodeOtlpJson(body.toString('utf8'));
}

/** {@link decodeTracesBody} with long texts by reference: what the OTLP receivers decode with. */
export function decodeTracesBodyLazily(format: BodyFormat, body: Buffer): DecodedRequest | DecodeError {
  return decodeTracesBody(format, body, true);
}

/** A logs request body (`ExportLogsServiceRequest`, protobuf or JSON). */
export function decodeLogsBody(format: BodyFormat, body: Buffer): DecodedLogsRequest | DecodeError {
  return format === 'protobuf' ? decodeOtlpLogsProto(body) : decodeOtlpLogsJson(body.toString('utf8'));
}
