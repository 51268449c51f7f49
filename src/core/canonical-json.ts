import { compareCodeUnits, sortSmall } from './sort-small.ts';

/**
 * The canonical JSON text of a JSON value, so that equal values give equal text:
 * object keys sorted by UTF-16 code units, no insignificant whitespace, numbers in the
 * shortest round-trip form (`1.0`, `1` and `1e0` all become `1`; `-0` becomes `0`), strings
 * escaped as `JSON.stringify` does. This follows RFC 8785 (JCS), so numbers compare as IEEE-754
 * doubles, exactly as `JSON.parse` reads them.
 *
 * Values JSON cannot hold are written as `JSON.stringify` would (non-finite numbers and
 * `undefined`/functions in arrays as `null`, `undefined` object members dropped), except a
 * bigint, which is written as its exact decimal digits.
 *
 * @example canonicalJson({ b: 1.0, a: [true, -0] }) === '{"a":[true,0],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

/** `undefined` for values that `JSON.stringify` omits from objects. */
function write(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      // Number#toString is already the shortest round-trip form; only -0 needs care.
      return Number.isFinite(value) ? (value === 0 ? '0' : String(value)) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object':
      if (value === null) return 'null';
      return Array.isArray(value) ? writeArray(value) : writeObject(value as Record<string, unknown>);
    default:
      return undefined;
  }
}

function writeArray(items: readonly unknown[]): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    out += write(items[i]) ?? 'null';
  }
  return out + ']';
}

function writeObject(object: Record<string, unknown>): string {
  const keys = sortSmall(Object.keys(object), compareCodeUnits);
  let out = '{';
  let first = true;
  for (const key of keys) {
    const member = write(object[key]);
    if (member === undefined) continue;
    if (!first) out += ',';
    first = false;
    out += JSON.stringify(key) + ':' + member;
  }
  return out + '}';
}
