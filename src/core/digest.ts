import { hash } from 'node:crypto';
import { canonicalJson } from './canonical-json.ts';

/** sha256 hex of a text's UTF-8 bytes (one-shot `crypto.hash`: no Hash object per call). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** sha256 of a text's UTF-8 bytes, as bytes: for comparing in constant time or reading as a number. */
export function sha256Bytes(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/** sha256 hex of the canonical JSON of `value`: the one digest every findings id is built on. */
export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
