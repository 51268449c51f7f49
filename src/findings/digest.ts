import { canonicalJson, sha256Hex } from '../normalize/canonical-json.ts';

/** sha256 hex of the canonical JSON of `value`: the one digest every findings id is built on. */
export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
