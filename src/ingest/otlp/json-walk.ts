/**
 * Walk state and typed field access for the OTLP/JSON decoder: every structural fault
 * becomes a {@link DecodeError} naming the path. Throws only to unwind the walk;
 * {@link decodeOtlpJsonValue} turns it into a returned value.
 */
import { DecodeError } from '../../errors.ts';

/**
 * Characters charged per value for what the estimate does not count: braces, quotes,
 * commas and the wrapper keys (`{"key":"","value":{"stringValue":""}},` is 36 characters
 * around the key and value), and per span for its ids, times and field names.
 */
export const estimateOverheadChars = { perValue: 36, perSpan: 260 } as const;

export type JsonObject = { [key: string]: unknown };

/** Where the walk is, for error messages; set as the walk descends, read only on failure. */
export interface Cursor {
  path: string;
  /** Running size estimate of the current span, in characters. */
  chars: number;
}

/** Ends the walk with a DecodeError at the cursor's path. */
export function fail(cursor: Cursor, detail: string): never {
  throw new DecodeError(`${cursor.path}: ${detail}`, { context: { path: cursor.path } });
}

/** `typeof`, but telling arrays and null apart, for error messages. */
export function typeName(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/** A JSON object (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field by its lowerCamelCase name, else its proto name. */
export function field(object: JsonObject, camel: string, snake: string): unknown {
  const value = object[camel];
  return value === undefined || value === null ? object[snake] : value;
}

/** A repeated field: absent/null is empty, anything but an array is a DecodeError. */
export function list(cursor: Cursor, object: JsonObject, camel: string, snake: string): readonly unknown[] {
  const value = field(object, camel, snake);
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(cursor, `${camel} must be an array, got ${typeName(value)}`);
  return value;
}

/** `value` as a JSON object (a protobuf message), else a DecodeError naming `what`. */
export function message(cursor: Cursor, value: unknown, what: string): JsonObject {
  if (!isObject(value)) fail(cursor, `${what} must be an object, got ${typeName(value)}`);
  return value;
}

/** A string field; absent or null is the proto default `''`. */
export function optionalString(cursor: Cursor, value: unknown, what: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') fail(cursor, `${what} must be a string, got ${typeName(value)}`);
  return value;
}

/** A JSON int64/uint64 given as a decimal string. */
export const decimalInteger = /^-?[0-9]+$/;
