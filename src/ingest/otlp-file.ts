import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { DecodeError } from '../errors.ts';
import { decodeOtlpJson } from './otlp-json-decode.ts';
import { decodeOtlpProto } from './otlp-proto-decode.ts';
import type { DecodedRequest } from './span.ts';

/** Cap on a recorded file after decompression: the same order as the receiver's body cap. */
export const MAX_RECORDED_FILE_BYTES = 1024 * 1024 * 1024;

/**
 * Reads one recorded OTLP trace file: gzip or not (by its magic bytes), then OTLP/JSON (one
 * ExportTraceServiceRequest, or one per line as the Collector's file exporter writes) when
 * it starts with `{`, else one protobuf ExportTraceServiceRequest.
 */
export async function readOtlpFile(path: string): Promise<DecodedRequest[] | DecodeError> {
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
    const decoded = decodeOtlpProto(bytes);
    return decoded instanceof DecodeError ? decoded : [decoded];
  }
  const text = bytes.toString('utf8');
  const whole = decodeOtlpJson(text);
  if (!(whole instanceof DecodeError)) return [whole];
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length < 2) return whole;
  const requests: DecodedRequest[] = [];
  for (const [i, line] of lines.entries()) {
    const decoded = decodeOtlpJson(line);
    if (decoded instanceof DecodeError) return new DecodeError(`line ${i + 1}: ${decoded.message}`, { cause: decoded });
    requests.push(decoded);
  }
  return requests;
}
