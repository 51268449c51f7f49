import type { Attributes, AttrValue } from '../ingest/span.ts';

/**
 * Attribute readers shared by the mappers. Two rules: an identifier or name that is missing
 * or empty is absent (an empty id names nothing); captured content is kept exactly, and a
 * structured AnyValue becomes its JSON text.
 */

/** An identifier or name: a non-empty string, or a number's decimal text; else `undefined`. */
export function idAttr(attributes: Attributes, key: string): string | undefined {
  const value = attributes[key];
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

/** The first of `keys` that holds an identifier. */
export function firstIdAttr(attributes: Attributes, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const id = idAttr(attributes, key);
    if (id !== undefined) return id;
  }
  return undefined;
}

/** Captured content as text: strings as they are, structured values as JSON; missing or null is `undefined`. */
export function textAttr(attributes: Attributes, key: string): string | undefined {
  return attrText(attributes[key]);
}

/** Text of one attribute value (see `textAttr`). */
export function attrText(value: AttrValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** The value of the first key in `keys` that is present and not null. */
export function firstAttr(attributes: Attributes, keys: readonly string[]): AttrValue | undefined {
  for (const key of keys) {
    const value = attributes[key];
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}
