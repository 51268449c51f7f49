import type { Attributes, Span } from '../ingest/span.ts';
import { parseJsonText } from './json-text.ts';

/**
 * Whether a span that no mapper read as tool or model work still says it is such work, in a
 * convention trajwatch does not read: the hint for `Step.unreadConvention`, or `undefined`.
 *
 * Only explicit signals count, so that ordinary `other` spans (HTTP clients, framework chains,
 * wrappers) never become gaps:
 * 1. a classification attribute — a key ending in `span.kind`, `span_kind`, `spanKind`,
 *    `span.type`, `span_type`, `spanType`, `observation.type`, `observation_type` or `run_type`
 *    (`mlflow.spanType`, `langfuse.observation.type`, `lmnr.span.type`, `langsmith.span.kind`)
 *    — whose value (or JSON string value: MLflow writes `"TOOL"`) names tool or model work
 *    ({@link TOOL_OR_MODEL_TYPES}): hint `KEY=VALUE`;
 * 2. a span name that is a tool-call label — `Function: X`, `Tool: X`, `Tool call: X`,
 *    `Calling tool: X`, or GenAI's own `execute_tool X` on a span without
 *    `gen_ai.operation.name`: hint `name-pattern=<label> *`;
 * 3. an input attribute (last key segment `input(s)`, `arg(s)`, `arguments`, or `…Inputs`) whose JSON text is
 *    shaped like a function call ({@link isFunctionCallShape}): hint `input=function-call-shape`.
 * The first rule that holds gives the hint.
 */
export function detectUnreadConvention(span: Span): string | undefined {
  return classifiedAs(span.attributes) ?? namedAsToolCall(span.name) ?? inputShapedAsCall(span.attributes);
}

/** Upper-cased classification values that name tool or model work. */
export const TOOL_OR_MODEL_TYPES: ReadonlySet<string> = new Set([
  'TOOL',
  'TOOL_CALL',
  'FUNCTION',
  'FUNCTION_CALL',
  'LLM',
  'CHAT_MODEL',
  'CHAT',
  'GENERATION',
  'COMPLETION',
]);

const CLASSIFICATION_KEY = /(?:^|\.)(?:span[._]?kind|span[._]?type|observation[._]type|run_type)$/i;

function classifiedAs(attributes: Attributes): string | undefined {
  for (const key in attributes) {
    if (!CLASSIFICATION_KEY.test(key)) continue;
    const type = classificationText(attributes[key]);
    if (type !== undefined && TOOL_OR_MODEL_TYPES.has(type.toUpperCase())) return `${key}=${type}`;
  }
  return undefined;
}

/** The value as text, a JSON string literal unquoted: MLflow writes every attribute as JSON (`"TOOL"`). */
function classificationText(value: Attributes[string] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!text.startsWith('"')) return text;
  const json = parseJsonText(text);
  return json !== undefined && typeof json.value === 'string' ? json.value.trim() : text;
}

const TOOL_CALL_NAME = /^(function|tool|tool[ _]call|calling tool|function[ _]call)\s*:\s*\S/i;
const GENAI_TOOL_NAME = /^execute_tool\s+\S/;

function namedAsToolCall(name: string): string | undefined {
  const label = TOOL_CALL_NAME.exec(name);
  if (label !== null) return `name-pattern=${label[1]}: *`;
  if (GENAI_TOOL_NAME.test(name)) return 'name-pattern=execute_tool *';
  return undefined;
}

/** Inputs longer than this are not parsed to look for a call's shape (a prompt, a document). */
export const MAX_SHAPE_PROBE_CHARS = 65_536;

/** `input`, `inputs`, `arg(s)`, `arguments` as the key's last segment, or a camel-case `…Inputs`, `…Args`. */
const INPUT_KEY = /(?:^|[._])(?:[Ii]nputs?|[Aa]rgs?|[Aa]rguments)$|[a-z](?:Inputs?|Args|Arguments)$/;

function inputShapedAsCall(attributes: Attributes): string | undefined {
  for (const key in attributes) {
    if (!INPUT_KEY.test(key)) continue;
    const value = attributes[key];
    if (typeof value !== 'string' || value.length > MAX_SHAPE_PROBE_CHARS) continue;
    const json = parseJsonText(value);
    if (json !== undefined && isFunctionCallShape(json.value)) return 'input=function-call-shape';
  }
  return undefined;
}

/**
 * A JSON value shaped like one function call: OpenAI's `{name, arguments}` or
 * `{function: {name, …}}`, a typed call `{type: function_call | tool_call | tool_use, name}`,
 * or a recorded Python call `{args: [...], kwargs: {...}}` (what call-recording decorators
 * write).
 */
export function isFunctionCallShape(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  const named = typeof v['name'] === 'string' && v['name'] !== '';
  if (named && 'arguments' in v) return true;
  if (named && (v['type'] === 'function_call' || v['type'] === 'tool_call' || v['type'] === 'tool_use')) return true;
  const fn = v['function'];
  if (typeof fn === 'object' && fn !== null && typeof (fn as Record<string, unknown>)['name'] === 'string') return true;
  const kwargs = v['kwargs'];
  return Array.isArray(v['args']) && typeof kwargs === 'object' && kwargs !== null && !Array.isArray(kwargs);
}
