import type { Attributes, AttrValue } from '../ingest/span.ts';

/**
 * Attribute readers shared by the mappers. Two rules: an identifier or name that is missing,
 * empty or a placeholder is absent (it names nothing, and two spans sharing it are not one
 * call); captured content is kept exactly, and a structured AnyValue becomes its JSON text.
 */

/**
 * What instrumentations write where they have no id. Google ADK writes `<not specified>` as
 * `gen_ai.tool.call.id` when the call had no response event (`trace_tool_call`): read as an id,
 * every such call would share one, and be linked and de-duplicated as if it were one call.
 */
export const PLACEHOLDER_IDS: ReadonlySet<string> = new Set(['<not specified>']);

/** An identifier or name: a non-empty, non-placeholder string, or a number's decimal text; else `undefined`. */
export function idAttr(attributes: Attributes, key: string): string | undefined {
  const value = attributes[key];
  if (typeof value === 'string') return value === '' || PLACEHOLDER_IDS.has(value) ? undefined : value;
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
