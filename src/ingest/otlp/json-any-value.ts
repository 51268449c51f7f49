/**
 * OTLP/JSON KeyValue and AnyValue decoding into {@link AttrValue}s, bounded by
 * {@link maxAnyValueDepth}; yields what the protobuf decoder yields for the same value.
 */
import { Buffer } from 'node:buffer';
import { int64FromBigInt, maxAnyValueDepth, setAttribute } from './any-value.ts';
import { type Cursor, decimalInteger, estimateOverheadChars, fail, field, type JsonObject, list, message, optionalString } from './json-walk.ts';
import type { AttrValue, Attributes } from '../span.ts';

/** Decodes the repeated KeyValue field `camel`/`snake` of `owner` into `target`; a later duplicate key wins. */
export function decodeAttributesInto(cursor: Cursor, owner: JsonObject, camel: string, snake: string, target: Attributes): void {
  const keyValues = list(cursor, owner, camel, snake);
  for (let i = 0; i < keyValues.length; i++) decodeKeyValueInto(cursor, keyValues[i], target, 0);
}

function decodeKeyValueInto(cursor: Cursor, value: unknown, target: { [key: string]: AttrValue }, depth: number): void {
  const keyValue = message(cursor, value, 'KeyValue');
  const key = optionalString(cursor, keyValue.key, 'attribute key');
  cursor.chars += key.length + estimateOverheadChars.perValue;
  const anyValue = keyValue.value;
  setAttribute(target, key, anyValue === undefined || anyValue === null ? null : decodeAnyValue(cursor, anyValue, key, depth));
}

/** `key` names the attribute the value belongs to, for error messages. */
export function decodeAnyValue(cursor: Cursor, value: unknown, key: string, depth: number): AttrValue {
  const any = message(cursor, value, `value of attribute "${key}"`);
  let v: unknown;
  if ((v = field(any, 'stringValue', 'string_value')) !== undefined && v !== null) {
    if (typeof v !== 'string') fail(cursor, `attribute "${key}": stringValue must be a string`);
    cursor.chars += v.length;
    return v;
  }
  if ((v = field(any, 'intValue', 'int_value')) !== undefined && v !== null) return int64(cursor, v, key);
  if ((v = field(any, 'boolValue', 'bool_value')) !== undefined && v !== null) {
    if (typeof v !== 'boolean') fail(cursor, `attribute "${key}": boolValue must be a boolean`);
    return v;
  }
  if ((v = field(any, 'doubleValue', 'double_value')) !== undefined && v !== null) return double(cursor, v, key);
  if ((v = field(any, 'arrayValue', 'array_value')) !== undefined && v !== null) {
    if (depth >= maxAnyValueDepth) fail(cursor, `attribute "${key}": AnyValue nested deeper than maxAnyValueDepth (${maxAnyValueDepth})`);
    const items = list(cursor, message(cursor, v, `attribute "${key}" arrayValue`), 'values', 'values');
    const values: AttrValue[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      cursor.chars += estimateOverheadChars.perValue / 2;
      values[i] = item === null ? null : decodeAnyValue(cursor, item, key, depth + 1);
    }
    return values;
  }
  if ((v = field(any, 'kvlistValue', 'kvlist_value')) !== undefined && v !== null) {
    if (depth >= maxAnyValueDepth) fail(cursor, `attribute "${key}": AnyValue nested deeper than maxAnyValueDepth (${maxAnyValueDepth})`);
    const entries = list(cursor, message(cursor, v, `attribute "${key}" kvlistValue`), 'values', 'values');
    const values: { [key: string]: AttrValue } = {};
    for (let i = 0; i < entries.length; i++) decodeKeyValueInto(cursor, entries[i], values, depth + 1);
    return values;
  }
  if ((v = field(any, 'bytesValue', 'bytes_value')) !== undefined && v !== null) {
    if (typeof v !== 'string') fail(cursor, `attribute "${key}": bytesValue must be a base64 string`);
    cursor.chars += v.length;
    // Re-encoding normalizes base64url and missing padding to the form the protobuf decoder yields.
    return Buffer.from(v, 'base64').toString('base64');
  }
  return null;
}

const minInt64 = -(2n ** 63n);
const maxInt64 = 2n ** 63n - 1n;

function int64(cursor: Cursor, value: unknown, key: string): number | string {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) fail(cursor, `attribute "${key}": intValue ${value} is not an integer`);
    return Number.isSafeInteger(value) ? value : int64FromBigInt(BigInt(value));
  }
  if (typeof value !== 'string' || !decimalInteger.test(value)) {
    fail(cursor, `attribute "${key}": intValue ${JSON.stringify(value)} is not a decimal integer`);
  }
  if (value.length < 16) return Number(value); // at most 15 digits: always a safe integer
  const big = BigInt(value);
  if (big < minInt64 || big > maxInt64) fail(cursor, `attribute "${key}": intValue ${value} is outside int64`);
  return int64FromBigInt(big);
}

function double(cursor: Cursor, value: unknown, key: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    // The proto JSON mapping writes non-finite doubles (and allows any double) as strings.
    if (value === 'NaN') return Number.NaN;
    if (value === 'Infinity') return Number.POSITIVE_INFINITY;
    if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
    const parsed = value.trim() === '' ? Number.NaN : Number(value);
    if (!Number.isNaN(parsed)) return parsed;
  }
  return fail(cursor, `attribute "${key}": doubleValue ${JSON.stringify(value)} is not a number`);
}
