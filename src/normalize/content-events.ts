import type { Attributes, AttrValue } from '../ingest/span.ts';
import { attrText, idAttr } from './attributes.ts';
import { fill } from './base-step.ts';
import { parseJsonText } from './json-text.ts';
import { genaiRequestedToolCalls, legacyRequestedToolCalls } from './requested-tool-calls.ts';
import type { Step } from './step.ts';
import { toolSchemasFromList } from './tool-schemas.ts';
import { toToolArgs } from './tool-args.ts';

/**
 * GenAI content events, whatever carries them: a span event (name + attributes) or an OTLP
 * log record (event name + attributes + body). The facts they carry fill only what a step's
 * attributes left absent: attributes win, and a fact once captured is never overwritten.
 *
 * The shapes read, from the emitters themselves:
 * - `gen_ai.client.inference.operation.details` (GenAI ≥1.37; Strands with
 *   `gen_ai_latest_experimental`): `gen_ai.input.messages`, `gen_ai.output.messages`,
 *   `gen_ai.tool.definitions` as attributes (or body fields), JSON text or structured. On a
 *   tool step, the input messages' `tool_call` part holds the call (`name`, `id`,
 *   `arguments`) and the output messages' `tool_call_response` part the result (`response`,
 *   some emitters `result`).
 * - the GenAI ≤1.36 message events `gen_ai.system.message`, `gen_ai.user.message`,
 *   `gen_ai.assistant.message`, `gen_ai.tool.message` (body or attributes `content`, `id`,
 *   `tool_calls`) and `gen_ai.choice` (`message`, `finish_reason`, `index`). OpenAI-v2
 *   instrumentation emits them as log records on chat calls; Strands by default as span
 *   events, where on an `execute_tool` span `gen_ai.tool.message` carries the call's input
 *   (`content` = the arguments' JSON, `id` = the call id) and `gen_ai.choice` its result
 *   (`message`, `id`).
 *
 * What each step kind takes: a tool step takes tool name, call id, args and result; an llm
 * step takes input (the messages), result (the output) and tool schemas; an agent step takes
 * input and result. Other kinds (framework wrappers, Strands' event-loop cycles, which replay
 * the whole history) take nothing: their history is not a fact about one act. One exception
 * keeps the GenAI mapper's rule: a span naming a GenAI operation of another kind (memory
 * operations, `agent_step`) takes the details event's messages as its input and result.
 */

/** One content event as read here; a span event fits as it is (no body). */
export interface ContentEvent {
  name: string;
  attributes: Attributes;
  /** A log record's body; span events have none. */
  body?: AttrValue;
}

export const DETAILS_EVENT = 'gen_ai.client.inference.operation.details';
const CHOICE_EVENT = 'gen_ai.choice';

/** Legacy message event name → the role of the message it carries. */
const ROLE_BY_EVENT: ReadonlyMap<string, string> = new Map([
  ['gen_ai.system.message', 'system'],
  ['gen_ai.user.message', 'user'],
  ['gen_ai.assistant.message', 'assistant'],
  ['gen_ai.tool.message', 'tool'],
]);

/** Whether `name` names a GenAI content event (the only events and log records read for content). */
export function isContentEventName(name: string): boolean {
  return name === DETAILS_EVENT || name === CHOICE_EVENT || ROLE_BY_EVENT.has(name);
}

/**
 * The event name of a log record: `LogRecord.event_name` when set, else the `event.name`
 * attribute older SDKs write; `''` when neither names one.
 */
export function logEventName(eventName: string, attributes: Attributes): string {
  if (eventName !== '') return eventName;
  const fromAttribute = attributes['event.name'];
  return typeof fromAttribute === 'string' ? fromAttribute : '';
}

/** The facts one content event carries for a step of a given kind; absent facts are absent. */
export interface ContentFacts {
  toolName?: string;
  toolCallId?: string;
  /** Tool-call arguments exactly as carried (JSON text or a structured value). */
  args?: AttrValue;
  /** Tool result, or llm/agent output, as text. */
  result?: string;
  /** llm/agent input messages as text (`gen_ai.input.messages`). */
  input?: string;
  /** A legacy message event: one input message, to be joined with its siblings in order. */
  message?: AttrValue;
  /** A `gen_ai.choice`: one output choice. */
  choice?: AttrValue;
  toolDefinitions?: AttrValue;
  /** The details event's `gen_ai.output.messages` as carried (llm steps read requested tool calls from it). */
  outputMessages?: AttrValue;
}

/**
 * The facts `event` carries for a step of kind `kind` (pure). `undefined` when the event is
 * not a content event or carries nothing that kind takes. `genaiOperation`: the span names a
 * GenAI operation (`gen_ai.operation.name`); then the details event's messages are its input
 * and result whatever its kind, as the GenAI mapper reads the same keys from attributes.
 */
export function readContentEvent(event: ContentEvent, kind: Step['kind'], genaiOperation = false): ContentFacts | undefined {
  if (event.name === DETAILS_EVENT && kind !== 'tool' && genaiOperation) return messageDetails(fieldReader(event), kind);
  if (kind !== 'tool' && kind !== 'llm' && kind !== 'agent') return undefined;
  const get = fieldReader(event);
  if (event.name === DETAILS_EVENT) {
    return kind === 'tool' ? toolDetails(get) : messageDetails(get, kind);
  }
  if (event.name === CHOICE_EVENT) {
    const message = get('message');
    if (kind === 'tool') return compact({ result: attrText(message), toolCallId: idOf(get('id')) });
    // A choice without a message (content capture off) carries no output.
    return message === undefined || message === null ? undefined : { choice: message };
  }
  const role = ROLE_BY_EVENT.get(event.name);
  if (role === undefined) return undefined;
  if (kind === 'tool') {
    // Only Strands puts a message event on a tool span: the call's input (see above).
    if (role !== 'tool') return undefined;
    return compact({ args: nonNull(get('content')), toolCallId: idOf(get('id')) });
  }
  return { message: legacyMessage(role, event) };
}

/**
 * Fills `step` from its content events, in order: what its attributes already gave stays.
 * Legacy message events become one input list, `gen_ai.choice` events one output (the single
 * choice's message as captured, or the list of them). Cheap on steps without content events:
 * one name lookup per event.
 */
export function applyContentEvents(step: Step, events: readonly ContentEvent[]): void {
  let messages: AttrValue[] | undefined;
  let choices: AttrValue[] | undefined;
  let outputMessages: AttrValue | undefined;
  let genaiOperation: boolean | undefined;
  for (const event of events) {
    if (!isContentEventName(event.name)) continue;
    genaiOperation ??= typeof step.attributes['gen_ai.operation.name'] === 'string';
    const facts = readContentEvent(event, step.kind, genaiOperation);
    if (facts === undefined) continue;
    fill(step, 'toolName', facts.toolName);
    fill(step, 'toolCallId', facts.toolCallId);
    if (facts.args !== undefined && step.args === undefined) step.args = toToolArgs(facts.args);
    fill(step, 'result', facts.result);
    fill(step, 'input', facts.input);
    if (facts.toolDefinitions !== undefined && step.toolSchemas === undefined && step.kind === 'llm') {
      fill(step, 'toolSchemas', toolSchemasFromList(facts.toolDefinitions));
    }
    if (facts.message !== undefined) (messages ??= []).push(facts.message);
    if (facts.choice !== undefined) (choices ??= []).push(facts.choice);
    outputMessages ??= facts.outputMessages;
  }
  if (messages !== undefined) fill(step, 'input', JSON.stringify(messages));
  if (choices !== undefined) fill(step, 'result', choices.length === 1 ? attrText(choices[0]) : JSON.stringify(choices));
  if (step.kind === 'llm' && step.requestedToolCalls === undefined) {
    // The calls the output asked for, wherever the output came from: capture gaps read them.
    fill(step, 'requestedToolCalls', choices === undefined ? genaiRequestedToolCalls(outputMessages) : legacyRequestedToolCalls(choices));
  }
}

type FieldReader = (key: string) => AttrValue | undefined;

/** Attributes first, then the fields of a kvlist body (log records put content in either). */
function fieldReader(event: ContentEvent): FieldReader {
  const body = event.body;
  const bodyFields = isRecord(body) ? body : undefined;
  return (key) => {
    const value = event.attributes[key];
    if (value !== undefined && value !== null) return value;
    return bodyFields === undefined ? undefined : nonNull(bodyFields[key]);
  };
}

function messageDetails(get: FieldReader, kind: Step['kind']): ContentFacts | undefined {
  return compact({
    input: attrText(get('gen_ai.input.messages')),
    result: attrText(get('gen_ai.output.messages')),
    toolDefinitions: kind === 'llm' ? get('gen_ai.tool.definitions') : undefined,
    outputMessages: kind === 'llm' ? get('gen_ai.output.messages') : undefined,
  });
}

/** A tool step's details: the `tool_call` part of the input, the `tool_call_response` of the output. */
function toolDetails(get: FieldReader): ContentFacts | undefined {
  const facts: ContentFacts = {};
  const call = findPart(get('gen_ai.input.messages'), 'tool_call');
  if (call !== undefined) {
    const name = idOf(call['name']);
    const id = idOf(call['id']);
    const args = nonNull(call['arguments']);
    if (name !== undefined) facts.toolName = name;
    if (id !== undefined) facts.toolCallId = id;
    if (args !== undefined) facts.args = args;
  }
  const response = findPart(get('gen_ai.output.messages'), 'tool_call_response');
  if (response !== undefined) {
    const result = attrText(nonNull(response['response']) ?? nonNull(response['result']));
    const id = idOf(response['id']);
    if (result !== undefined) facts.result = result;
    if (id !== undefined && facts.toolCallId === undefined) facts.toolCallId = id;
  }
  return compact(facts);
}

/** The first part of type `type` among the messages (JSON text or structured). */
function findPart(messages: AttrValue | undefined, type: string): Record<string, AttrValue> | undefined {
  const list = typeof messages === 'string' ? parseJsonText(messages)?.value : messages;
  if (!Array.isArray(list)) return undefined;
  for (const message of list) {
    if (!isRecord(message) || !Array.isArray(message['parts'])) continue;
    for (const part of message['parts']) {
      if (isRecord(part) && part['type'] === type) return part;
    }
  }
  return undefined;
}

/** A legacy message event as one message: its role, then the fields it carries. */
function legacyMessage(role: string, event: ContentEvent): AttrValue {
  const message: Record<string, AttrValue> = { role };
  const body = event.body;
  if (isRecord(body)) {
    for (const [key, value] of Object.entries(body)) if (key !== 'role') message[key] = value;
  } else if (body !== undefined && body !== null) {
    message['content'] = body;
  }
  for (const key of ['content', 'id', 'tool_calls']) {
    const value = event.attributes[key];
    if (value !== undefined && value !== null && message[key] === undefined) message[key] = value;
  }
  return message;
}

function idOf(value: AttrValue | undefined): string | undefined {
  return idAttr({ v: value ?? null }, 'v');
}

function nonNull(value: AttrValue | undefined): AttrValue | undefined {
  return value === null ? undefined : value;
}

function isRecord(value: unknown): value is Record<string, AttrValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `facts` without undefined members, or `undefined` when nothing is left. */
function compact(facts: ContentFacts): ContentFacts | undefined {
  let any = false;
  for (const key of Object.keys(facts) as (keyof ContentFacts)[]) {
    if (facts[key] === undefined) delete facts[key];
    else any = true;
  }
  return any ? facts : undefined;
}
