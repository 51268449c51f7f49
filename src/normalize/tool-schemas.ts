import type { Attributes, AttrValue } from '../ingest/span.ts';
import { parseJsonText } from './json-text.ts';

/** Tool JSON Schemas by tool name, as `Step.toolSchemas` holds them. */
export type ToolSchemas = Record<string, unknown>;

/**
 * Adds one tool definition to `schemas`. Accepts the shapes the conventions emit:
 * `{type: "function", function: {name, parameters}}` (OpenAI, OpenInference `llm.tools`),
 * `{name, parameters}` (GenAI `gen_ai.tool.definitions`), `{name, inputSchema}` (AI SDK 5+),
 * `{name, input_schema}` (Anthropic). A definition without a name or a schema adds nothing.
 * Returns `schemas`, created on first use.
 */
export function addToolDefinition(schemas: ToolSchemas | undefined, definition: unknown): ToolSchemas | undefined {
  if (!isRecord(definition)) return schemas;
  const inner = isRecord(definition['function']) ? definition['function'] : definition;
  const name = inner['name'];
  const schema = inner['parameters'] ?? inner['inputSchema'] ?? inner['input_schema'];
  if (typeof name !== 'string' || name === '' || schema === undefined) return schemas;
  return addToolSchema(schemas, name, schema);
}

/** Sets `schemas[name] = schema`, safely for any name (a tool may be called `__proto__`). */
export function addToolSchema(schemas: ToolSchemas | undefined, name: string, schema: unknown): ToolSchemas {
  const target = schemas ?? {};
  if (name === '__proto__') {
    Object.defineProperty(target, name, { value: schema, enumerable: true, writable: true, configurable: true });
  } else {
    target[name] = schema;
  }
  return target;
}

/**
 * How many tool-definition texts keep their parsed value. An agent resends the same
 * definitions on every model call, so parsing each text once saves most of the cost; when
 * full, the oldest entry is evicted (insertion order).
 */
export const maxCachedToolDefinitions = 512;

const parsedDefinitions = new Map<string, unknown>();

/**
 * A JSON-text or structured attribute value as a JS value; `undefined` when text is not JSON.
 * Parsed texts are cached and shared between steps: treat tool schemas as read-only.
 */
export function structuredValue(value: AttrValue): unknown {
  return typeof value === 'string' ? parseDefinitionText(value) : value;
}

function parseDefinitionText(text: string): unknown {
  if (parsedDefinitions.has(text)) return parsedDefinitions.get(text);
  const parsed = parseJsonText(text)?.value;
  if (parsedDefinitions.size >= maxCachedToolDefinitions) {
    const oldest = parsedDefinitions.keys().next();
    if (oldest.done !== true) parsedDefinitions.delete(oldest.value);
  }
  parsedDefinitions.set(text, parsed);
  return parsed;
}

/** Tool definitions from a list value (structured array, or JSON text of one; entries may be JSON text). */
export function toolSchemasFromList(value: AttrValue | undefined): ToolSchemas | undefined {
  if (value === undefined || value === null) return undefined;
  const list = structuredValue(value);
  if (!Array.isArray(list)) return undefined;
  let schemas: ToolSchemas | undefined;
  for (const entry of list) {
    schemas = addToolDefinition(schemas, typeof entry === 'string' ? parseDefinitionText(entry) : entry);
  }
  return schemas;
}

/**
 * Tool definitions flattened into indexed attributes, `${prefix}.0${suffix}`, `${prefix}.1${suffix}`...
 * read until the first missing index (how OpenInference writes `llm.tools.{i}.tool.json_schema`).
 */
export function toolSchemasFromIndexed(attributes: Attributes, prefix: string, suffix: string): ToolSchemas | undefined {
  let schemas: ToolSchemas | undefined;
  for (let i = 0; ; i++) {
    const value = attributes[`${prefix}.${i}${suffix}`];
    if (value === undefined) return schemas;
    if (value !== null) schemas = addToolDefinition(schemas, structuredValue(value));
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
