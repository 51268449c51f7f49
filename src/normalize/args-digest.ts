import { canonicalJson } from '../core/canonical-json.ts';
import { sha256Hex } from '../core/digest.ts';
import { parseJsonText } from './json-text.ts';

/** sha256 hex of `'json:' + canonicalJson(value)`: the digest of arguments that parsed. */
export function jsonDigest(value: unknown): string {
  return sha256Hex('json:' + canonicalJson(value));
}

/** sha256 hex of `'text:' + raw`: the digest of arguments that are not JSON; never equals a JSON digest's preimage. */
export function textDigest(raw: string): string {
  return sha256Hex('text:' + raw);
}

/**
 * The digest of captured tool-call arguments: `jsonDigest` of the parsed value when `raw` is
 * JSON, else `textDigest(raw)`. Key order and whitespace do not change it.
 */
export function argsDigest(raw: string): string {
  const parsed = parseJsonText(raw);
  return parsed === undefined ? textDigest(raw) : jsonDigest(parsed.value);
}
