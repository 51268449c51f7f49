import type { Text } from '../ingest/long-text.ts';
import type { Attributes, AttrValue } from '../ingest/span.ts';

/** What kind of act a step is, whatever convention described it. */
export type StepKind = 'llm' | 'tool' | 'agent' | 'retrieval' | 'message' | 'other';

export const STEP_KINDS: readonly StepKind[] = ['llm', 'tool', 'agent', 'retrieval', 'message', 'other'];

/**
 * Tool-call arguments: the text as captured, the call's arguments parsed, and their canonical
 * digest. A recorded call `{"args": [], "kwargs": {...}}` (see `readRecordedCall`) is read as
 * the call it records: `parsed` is its keyword arguments, and `recorded` says so.
 */
export interface ToolArgs {
  /**
   * The text exactly as captured (structured AnyValues are serialized to JSON first); never
   * unwrapped. With `source: 'request'`, the arguments as the requesting llm step captured them.
   */
  raw: string;
  /**
   * The call's arguments: the parsed JSON value, present only when `raw` parses as JSON; for a
   * recorded call with no positional arguments, its keyword arguments (`recorded: 'kwargs'`).
   */
  parsed?: unknown;
  /**
   * `kwargs`: `raw` is a recorded call and `parsed` its keyword arguments, unwrapped.
   * `wrapped`: `raw` is a framework's wrapper around the call (a callback envelope
   * `{input_str, tags, metadata, inputs, kwargs}`, an argument list `{input, options}`) and
   * `parsed` the member at `wrappedAt`, which equals the arguments of the LLM request the step
   * answers (`linkRequests`): confirmed, never guessed. Absent: `parsed` is `raw` parsed as it is.
   */
  recorded?: 'kwargs' | 'wrapped';
  /** With `recorded: 'wrapped'`: where in `raw` the arguments are, e.g. `inputs`, `args[0]`. */
  wrappedAt?: string;
  /**
   * `python-literal`: the captured text (`captured`, or the member at `wrappedAt`) is not JSON
   * but a Python literal (`repr`, e.g. `{'city': 'Lisbon'}`) whose value equals the request's
   * JSON arguments: a capture defect of the instrumentation, not the agent's, so it is no
   * `malformed-structure`; counted in the manifest's `capture.notes`.
   */
  capturedAs?: 'python-literal';
  /**
   * sha256 hex of the canonical form of the call's arguments: canonical JSON of `parsed`
   * (sorted keys, normalized numbers, no insignificant whitespace; so one call has one digest
   * however it was wrapped) when `raw` parses, else of the exact text prefixed so the two never
   * collide.
   */
  digest: string;
  /**
   * What the instrumentation declared the arguments to be, when it declares it: `json` for
   * attributes specified as JSON (GenAI `gen_ai.tool.call.arguments`, AI SDK `ai.toolCall.args`,
   * OpenInference `input.value` with `input.mime_type: application/json`), `text` where its
   * convention says text (OpenInference without a JSON mime type). Absent: not declared. With
   * `source: 'request'`, the format declared for the tool span's own text (`captured`).
   */
  declared?: ArgsFormat;
  /**
   * `request`: the tool span's own arguments were absent or not a structured object, and these
   * are the arguments of the LLM request the step answers (`linkRequests`): a derived fact.
   */
  source?: 'request';
  /** With `source: 'request'`: the tool span's own arguments text, when it had any. */
  captured?: string;
}

/** A declared format of captured tool arguments. */
export type ArgsFormat = 'json' | 'text';

/** A tool call an LLM output asked for, by what identifies it (at least one of the two). */
export interface RequestedToolCall {
  id?: string;
  name?: string;
  /** The call's arguments as the output carried them (JSON text, or a structured value). */
  arguments?: AttrValue;
}

/** Where a step's error was read from. */
export type ErrorSource = 'status' | 'exception' | 'error.type' | 'result';

export interface StepError {
  source: ErrorSource;
  /** `error.type`, or the exception's `exception.type`. */
  type?: string;
  /** Status message or `exception.message`. */
  message?: string;
}

/**
 * One meaningful act in a trajectory (DESIGN.md "Step"). The step id is the span id: the
 * physical attempt. Content the instrumentation did not capture is absent, never "".
 */
export interface Step {
  id: string;
  traceId: string;
  parentId?: string;
  kind: StepKind;
  /** The span name. */
  name: string;
  /** The convention mapper that read this span, e.g. `genai`, `openinference`. */
  convention: string;
  toolName?: string;
  toolCallId?: string;
  /** `request`: `toolCallId` is the id of the LLM request the step answers (`linkRequests`), not the span's. */
  toolCallIdSource?: 'request';
  args?: ToolArgs;
  /**
   * The tool result (tools) or the output text (llm, agent) as captured. A long one is a
   * `LongText` while its trajectory is open (its bytes in the request or the WAL); a closed
   * trajectory's steps hold strings (`withTexts`).
   */
  result?: Text;
  /** Input text other than tool args (llm prompt messages, agent input), as captured; like `result`, except that an llm step's stays a `LongText` after close too (`withTexts`). */
  input?: Text;
  error?: StepError;
  model?: string;
  agentName?: string;
  /** Conversation / session id when the span carries one: the trajectory key. */
  sessionId?: string;
  /**
   * JSON Schemas of the tools this step declared (llm steps: `gen_ai.tool.definitions`,
   * OpenInference `llm.tools`; tool steps: `tool.parameters`), by tool name.
   */
  toolSchemas?: Record<string, unknown>;
  /** llm steps: the tool calls the model's output asked for, in output order. */
  requestedToolCalls?: RequestedToolCall[];
  /**
   * A short hint (e.g. `mlflow.spanType=TOOL`) that the span looks like tool or model work in a
   * convention trajwatch does not read: what it did is not in this step (an `unread-convention`
   * capture gap). Absent when the span was read or looks like nothing of the kind.
   */
  unreadConvention?: string;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  /** Span status code (0 unset, 1 ok, 2 error). */
  statusCode: 0 | 1 | 2;
  /** The service that emitted the span (`service.name`), when known. */
  service?: string;
  /** Span and resource attributes, kept for provenance readers (treatment, conditions). */
  attributes: Attributes;
  resource: Attributes;
  /** Names of the span's events, in order (e.g. `exception`, steer events). */
  eventNames: string[];
  /** Size charged against the assembler's byte bound. */
  encodedBytes: number;
}
