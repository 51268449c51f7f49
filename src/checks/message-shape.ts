import { parseJsonText } from '../normalize/json-text.ts';

/**
 * What a captured output says the answer to the user was, read by its shape. `none` when the
 * output is not an answer: it ends in tool calls still to be run, its last message is not the
 * assistant's, or it holds no text.
 */
export type AnswerReading = { kind: 'answer'; text: string } | { kind: 'none'; reason: 'tool-calls-pending' | 'no-final-assistant-message' | 'empty' };

type Role = 'assistant' | 'user' | 'other';

interface Message {
  role: Role;
  text: string;
  toolCalls: boolean;
}

type Json = Record<string, unknown>;

/**
 * The answer an output (an agent's, a run root's, an llm call's) gives, by shape, whatever
 * framework wrote it:
 * - plain text, or a JSON string or scalar: the text itself;
 * - a conversation — an array of messages (`{role, content}`, GenAI `{role, parts}`,
 *   LangChain `{type: "ai", content}`, `{type: "ai", data: {...}}` or its `{lc, id, kwargs}`
 *   dump, LlamaIndex `{role, blocks}`, Bedrock and Gemini parts), or an object holding one
 *   (a graph state such as `{"messages": [...]}`): the last message, when it is the
 *   assistant's and requests no tool call. History before it is replay, not answer;
 * - one message, an OpenAI chat completion (`choices[0].message`), a LangChain LLM result
 *   (`generations`), an OpenAI Responses object (`output` items): the assistant message in it;
 *   a message's `finish_reason`, when given, says whether it awaits tools;
 * - a list of tool-call records (`[{toolCallId, toolName}]`): a request, not an answer;
 * - a result object with an answer field (`final_output`, `output`, `raw`, `text`, ... as
 *   strings): that field, not the steps listed beside it;
 * - any other JSON (a structured final output): the text as captured.
 */
export function readAnswer(raw: string): AnswerReading {
  const parsed = parseJsonText(raw);
  if (parsed === undefined) return textAnswer(raw);
  const value = parsed.value;
  if (typeof value === 'string') return textAnswer(value);
  if (value === null) return { kind: 'none', reason: 'empty' };
  if (typeof value !== 'object') return textAnswer(raw);
  if (isToolCallList(value)) return { kind: 'none', reason: 'tool-calls-pending' };
  const top = conversationOf(value);
  if (top !== undefined) return lastAnswer(top);
  const responses = Array.isArray(value) ? undefined : responsesOutput(value as Json);
  if (responses !== undefined) return responses;
  const nested = nestedConversationOf(value, STATE_DEPTH);
  if (nested !== undefined) return lastAnswer(nested);
  const field = Array.isArray(value) ? undefined : answerField(value as Json);
  return textAnswer(field ?? raw);
}

/**
 * Keys under which a run's result object holds its answer text, in order of preference:
 * the OpenAI Agents SDK's `final_output`, LangChain's `{output, intermediate_steps}`, CrewAI's
 * `{raw, tasks_output}`, Mastra's `{text, files}`... The rest of such an object (the
 * intermediate steps, the tasks' outputs) is the run's history, not its answer.
 */
const ANSWER_KEYS = ['final_output', 'final_answer', 'output', 'answer', 'response', 'raw', 'text', 'result', 'content'];

function answerField(record: Json): string | undefined {
  for (const key of ANSWER_KEYS) {
    const v = record[key];
    if (typeof v === 'string') return v;
  }
  return undefined;
}

/**
 * The task an input hands to an agent: plain text or a JSON string as it is; from a
 * conversation or a state holding one, the last user message (the rest is history replayed to
 * the agent); any other JSON as captured. `undefined` when a conversation has no user message.
 */
export function readTask(raw: string): string | undefined {
  const parsed = parseJsonText(raw);
  if (parsed === undefined) return raw;
  if (typeof parsed.value === 'string') return parsed.value;
  if (parsed.value === null || typeof parsed.value !== 'object') return raw;
  const conversation = nestedConversationOf(parsed.value, STATE_DEPTH);
  if (conversation === undefined) return raw;
  for (let i = conversation.length - 1; i >= 0; i--) if (conversation[i]!.role === 'user') return conversation[i]!.text;
  return undefined;
}

function textAnswer(text: string): AnswerReading {
  return text.trim() === '' ? { kind: 'none', reason: 'empty' } : { kind: 'answer', text };
}

function lastAnswer(conversation: readonly Message[]): AnswerReading {
  const last = conversation[conversation.length - 1];
  if (last === undefined || last.role !== 'assistant') return { kind: 'none', reason: 'no-final-assistant-message' };
  if (last.toolCalls) return { kind: 'none', reason: 'tool-calls-pending' };
  return textAnswer(last.text);
}

/** The messages of a conversation-shaped value, or undefined when it is not one. */
function conversationOf(value: object): Message[] | undefined {
  if (Array.isArray(value)) return messageList(value);
  const record = value as Json;
  const single = message(record);
  if (single !== undefined) return [single];
  const choices = record['choices'];
  if (Array.isArray(choices) && isRecord(choices[0]) && isRecord(choices[0]['message'])) {
    const m = message(choices[0]['message']);
    if (m !== undefined) return [m];
  }
  const generations = record['generations'];
  if (Array.isArray(generations) && Array.isArray(generations[0])) {
    const last = generations[0][generations[0].length - 1];
    if (isRecord(last)) {
      const m = isRecord(last['message']) ? message(last['message']) : undefined;
      if (m !== undefined) return [m];
      if (typeof last['text'] === 'string') return [{ role: 'assistant', text: last['text'], toolCalls: false }];
    }
  }
  // A state: the `messages` list first, else the first top-level list of messages.
  const preferred = Array.isArray(record['messages']) ? messageList(record['messages']) : undefined;
  if (preferred !== undefined) return preferred;
  for (const v of Object.values(record)) {
    if (!Array.isArray(v)) continue;
    const list = messageList(v);
    if (list !== undefined) return list;
  }
  // A wrapper around one message (LlamaIndex's AgentOutput `{response, tool_calls, raw}`): that
  // message, with tool calls listed beside it counting as its own.
  for (const v of Object.values(record)) {
    const m = isRecord(v) ? message(v) : undefined;
    if (m === undefined) continue;
    return [nonEmptyArray(record['tool_calls']) ? { ...m, toolCalls: true } : m];
  }
  return undefined;
}

/**
 * A conversation at the top of `value`, else nested a few levels down (a LangGraph `Command`
 * `{"output": [{"update": {"messages": [...]}}]}`): a value that holds messages is a state
 * whose answer is its last message, never its whole text.
 */
function nestedConversationOf(value: object, depth: number): Message[] | undefined {
  const here = conversationOf(value);
  if (here !== undefined || depth === 0) return here;
  for (const v of Array.isArray(value) ? value : Object.values(value)) {
    if (v === null || typeof v !== 'object') continue;
    const found = nestedConversationOf(v, depth - 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** How deep `readAnswer` looks for a conversation inside a state. */
const STATE_DEPTH = 3;

/** A list of tool-call records (Vercel AI SDK `ai.response.toolCalls`): a request, not an answer. */
function isToolCallList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.every((v) => isRecord(v) && ('toolCallId' in v || 'toolName' in v));
}

/** A non-empty array every element of which is a message. */
function messageList(items: readonly unknown[]): Message[] | undefined {
  if (items.length === 0) return undefined;
  const out: Message[] = [];
  for (const item of items) {
    const m = isRecord(item) ? message(item) : undefined;
    if (m === undefined) return undefined;
    out.push(m);
  }
  return out;
}

const ROLE_BY_NAME: Readonly<Record<string, Role>> = {
  assistant: 'assistant',
  ai: 'assistant',
  model: 'assistant',
  aimessage: 'assistant',
  aimessagechunk: 'assistant',
  user: 'user',
  human: 'user',
  humanmessage: 'user',
  humanmessagechunk: 'user',
};

const MESSAGE_TYPES = new Set([
  'ai',
  'human',
  'system',
  'tool',
  'function',
  'chat',
  'aimessage',
  'aimessagechunk',
  'humanmessage',
  'humanmessagechunk',
  'systemmessage',
  'toolmessage',
  'functionmessage',
]);

function roleOf(name: string): Role {
  return ROLE_BY_NAME[name.toLowerCase()] ?? 'other';
}

/** A message in any of the shapes the conventions and frameworks write, or undefined. */
function message(record: Json): Message | undefined {
  // LangChain's serialized form: {lc, type: "constructor", id: [..., "AIMessage"], kwargs: {...}}.
  if (Array.isArray(record['id']) && isRecord(record['kwargs']) && record['lc'] !== undefined) {
    const cls = record['id'][record['id'].length - 1];
    if (typeof cls !== 'string') return undefined;
    return messageBody(record['kwargs'], roleOf(cls));
  }
  // LangChain's `messages_to_dict` form (LangGraph state in Python): {type: "ai", data: {...}}.
  if (typeof record['type'] === 'string' && isRecord(record['data']) && !('content' in record)) {
    return MESSAGE_TYPES.has(record['type'].toLowerCase()) ? messageBody(record['data'], roleOf(record['type'])) : undefined;
  }
  const hasBody = 'content' in record || Array.isArray(record['parts']) || Array.isArray(record['blocks']);
  if (!hasBody) return undefined;
  if (typeof record['role'] === 'string') return messageBody(record, roleOf(record['role']));
  if (typeof record['type'] === 'string' && MESSAGE_TYPES.has(record['type'].toLowerCase())) {
    return messageBody(record, roleOf(record['type']));
  }
  return undefined;
}

/** Finish reasons that mean the model stopped to have tools run. */
const TOOL_FINISH_REASONS = new Set(['tool_call', 'tool_calls', 'tool-call', 'tool-calls', 'tool_use', 'function_call']);

function messageBody(record: Json, role: Role): Message {
  const message = partsOf(record, role);
  // A finish reason, when given, decides: an aggregated output (Vercel AI SDK 7's agent span)
  // lists every tool call of the run in the message that finished with "stop".
  const finish = record['finish_reason'];
  if (typeof finish === 'string' && finish !== '') return { ...message, toolCalls: TOOL_FINISH_REASONS.has(finish.toLowerCase()) };
  return message;
}

function partsOf(record: Json, role: Role): Message {
  const texts: string[] = [];
  let toolCalls = nonEmptyArray(record['tool_calls']) || isRecord(record['function_call']);
  const extra = record['additional_kwargs'];
  if (isRecord(extra) && (nonEmptyArray(extra['tool_calls']) || isRecord(extra['function_call']))) toolCalls = true;
  const content = record['content'];
  if (typeof content === 'string') texts.push(content);
  for (const list of [content, record['parts'], record['blocks']]) {
    if (!Array.isArray(list)) continue;
    for (const part of list) {
      if (typeof part === 'string') texts.push(part);
      else if (isRecord(part)) {
        // `type` (GenAI, OpenAI, Anthropic), `block_type` (LlamaIndex); Bedrock and Gemini parts
        // are untyped objects named by their one key (`text`, `toolUse`, `functionCall`).
        const tag = part['type'] ?? part['block_type'];
        const type = typeof tag === 'string' ? tag : TOOL_CALL_KEYS.some((k) => k in part) ? 'tool_call' : 'text';
        if (TOOL_CALL_PARTS.has(type)) toolCalls = true;
        else if (TEXT_PARTS.has(type)) {
          const text = typeof part['text'] === 'string' ? part['text'] : part['content'];
          if (typeof text === 'string') texts.push(text);
        }
      }
    }
  }
  return { role, text: texts.join('\n'), toolCalls };
}

/** Part types that carry answer text (GenAI `text`, OpenAI `output_text`), and tool requests. */
const TEXT_PARTS = new Set(['text', 'output_text']);
const TOOL_CALL_PARTS = new Set(['tool_call', 'tool_use', 'function_call']);
const TOOL_CALL_KEYS = ['toolUse', 'functionCall'];

/**
 * An OpenAI Responses object: `output` is a list of typed items. The answer is the last
 * `message` item's text, unless a call item (`function_call`, `*_call`) follows it.
 */
function responsesOutput(record: Json): AnswerReading | undefined {
  const items = record['output'];
  if (!Array.isArray(items) || items.length === 0) return undefined;
  if (!items.every((item) => isRecord(item) && typeof item['type'] === 'string')) return undefined;
  let answer: AnswerReading = { kind: 'none', reason: 'no-final-assistant-message' };
  for (const item of items as Json[]) {
    const type = item['type'] as string;
    if (type === 'message') {
      const m = messageBody(item, 'assistant');
      answer = m.toolCalls ? { kind: 'none', reason: 'tool-calls-pending' } : textAnswer(m.text);
    } else if (type.endsWith('_call')) answer = { kind: 'none', reason: 'tool-calls-pending' };
  }
  return answer;
}

function isRecord(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function nonEmptyArray(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}
