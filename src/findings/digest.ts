import { createHash } from 'node:crypto';
import { canonicalJson } from '../normalize/canonical-json.ts';

/** sha256 hex of the canonical JSON of `value`: the one digest every findings id is built on. */
export function canonicalDigest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
