import type { Attributes, AttrValue } from '../ingest/span.ts';
import { idAttr } from './attributes.ts';
import type { RequestedToolCall } from './step.ts';
import { parseJsonText } from './json-text.ts';

/**
 * The tool calls an LLM step's output asked for, read where each convention records them. Only
 * what identifies a call (its id and tool name) and its arguments as carried are kept; a call
 * naming neither is skipped.
 * `undefined` when the output names none. These readers are shared so that every mapper whose
 * spans may carry a vocabulary reads it the same way.
 */

/**
 * GenAI `gen_ai.output.messages`: `[{role, parts: [{type: "tool_call", id, name, arguments}]}]`,
 * structured or as JSON text.
 */
export function genaiRequestedToolCalls(messages: AttrValue | undefined): RequestedToolCall[] | undefined {
  if (messages === undefined || messages === null) return undefined;
  // Most outputs ask for no tool: a text without the part type is not parsed at all.
  if (typeof messages === 'string' && !messages.includes('tool_call')) return undefined;
  const list = typeof messages === 'string' ? parseJsonText(messages)?.value : messages;
  if (!Array.isArray(list)) return undefined;
  let calls: RequestedToolCall[] | undefined;
  for (const message of list) {
    const parts = isRecord(message) ? message['parts'] : undefined;
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      if (!isRecord(part) || part['type'] !== 'tool_call') continue;
      calls = push(calls, stringOf(part['id']), stringOf(part['name']), part['arguments']);
    }
  }
  return calls;
}

/**
 * Flattened, indexed tool calls: `${prefix}.{i}${infix}.{k}${idSuffix}` / `${nameSuffix}`, read
 * for each output index `i` that has a `${prefix}.{i}${marker}` attribute or a first tool call.
 * OpenInference: `llm.output_messages.{i}.message.tool_calls.{k}.tool_call.{id,function.name,
 * function.arguments}`; OpenLLMetry: `gen_ai.completion.{i}.tool_calls.{k}.{id,name,arguments}`.
 */
export function indexedRequestedToolCalls(attributes: Attributes, layout: IndexedLayout): RequestedToolCall[] | undefined {
  let calls: RequestedToolCall[] | undefined;
  for (let i = 0; i < MAX_INDEX; i++) {
    const message = `${layout.prefix}.${i}`;
    const callAt = (k: number) => `${message}${layout.infix}.${k}`;
    const hasMessage = layout.markers.some((marker) => attributes[`${message}${marker}`] !== undefined);
    if (!hasMessage && attributes[callAt(0) + layout.nameSuffix] === undefined && attributes[callAt(0) + layout.idSuffix] === undefined) {
      return calls;
    }
    for (let k = 0; k < MAX_INDEX; k++) {
      const id = idAttr(attributes, callAt(k) + layout.idSuffix);
      const name = idAttr(attributes, callAt(k) + layout.nameSuffix);
      if (id === undefined && name === undefined) break;
      calls = push(calls, id, name, attributes[callAt(k) + layout.argumentsSuffix]);
    }
  }
  return calls;
}

/** Where one convention flattens output messages and their tool calls. */
export interface IndexedLayout {
  prefix: string;
  /** Attributes of an output message that show it exists (its role, content, finish reason). */
  markers: readonly string[];
  infix: string;
  idSuffix: string;
  nameSuffix: string;
  argumentsSuffix: string;
}

export const OPENINFERENCE_OUTPUT_LAYOUT: IndexedLayout = {
  prefix: 'llm.output_messages',
  markers: ['.message.role', '.message.content'],
  infix: '.message.tool_calls',
  idSuffix: '.tool_call.id',
  nameSuffix: '.tool_call.function.name',
  argumentsSuffix: '.tool_call.function.arguments',
};

export const OPENLLMETRY_COMPLETION_LAYOUT: IndexedLayout = {
  prefix: 'gen_ai.completion',
  markers: ['.role', '.content', '.finish_reason'],
  infix: '.tool_calls',
  idSuffix: '.id',
  nameSuffix: '.name',
  argumentsSuffix: '.arguments',
};

/** AI SDK `ai.response.toolCalls`: JSON text of `[{toolCallId, toolName, args | input}]`. */
export function vercelRequestedToolCalls(value: AttrValue | undefined): RequestedToolCall[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === 'string' ? parseJsonText(value)?.value : value;
  if (!Array.isArray(list)) return undefined;
  let calls: RequestedToolCall[] | undefined;
  for (const call of list) {
    if (isRecord(call)) calls = push(calls, stringOf(call['toolCallId']), stringOf(call['toolName']), call['args'] ?? call['input']);
  }
  return calls;
}

/**
 * Legacy GenAI choices (`gen_ai.choice` events and log records, GenAI ≤1.36): each a message
 * `{role?, content?, tool_calls?: [{id, type, function: {name, arguments}}]}`, structured or as
 * JSON text.
 */
export function legacyRequestedToolCalls(choices: readonly unknown[]): RequestedToolCall[] | undefined {
  let calls: RequestedToolCall[] | undefined;
  for (const choice of choices) {
    const message = typeof choice === 'string' ? parseJsonText(choice)?.value : choice;
    const toolCalls = isRecord(message) ? message['tool_calls'] : undefined;
    if (!Array.isArray(toolCalls)) continue;
    for (const call of toolCalls) {
      if (!isRecord(call)) continue;
      const fn = call['function'];
      calls = push(calls, stringOf(call['id']), stringOf(isRecord(fn) ? fn['name'] : call['name']), isRecord(fn) ? fn['arguments'] : call['arguments']);
    }
  }
  return calls;
}

/** Bound on indexes read, so a span cannot make the reader loop long. */
const MAX_INDEX = 1024;

function push(calls: RequestedToolCall[] | undefined, id: string | undefined, name: string | undefined, args: unknown): RequestedToolCall[] | undefined {
  if (id === undefined && name === undefined) return calls;
  const call: RequestedToolCall = {};
  if (id !== undefined) call.id = id;
  if (name !== undefined) call.name = name;
  if (args !== undefined && args !== null) call.arguments = args as AttrValue;
  (calls ??= []).push(call);
  return calls;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
