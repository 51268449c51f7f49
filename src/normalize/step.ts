import type { Attributes } from '../ingest/span.ts';

/** What kind of act a step is, whatever convention described it. */
export type StepKind = 'llm' | 'tool' | 'agent' | 'retrieval' | 'message' | 'other';

export const STEP_KINDS: readonly StepKind[] = ['llm', 'tool', 'agent', 'retrieval', 'message', 'other'];

/** Tool-call arguments as captured, parsed when they are JSON, and their canonical digest. */
export interface ToolArgs {
  /** The text exactly as captured (structured AnyValues are serialized to JSON first). */
  raw: string;
  /** The parsed JSON value, present only when `raw` parses as JSON. */
  parsed?: unknown;
  /**
   * sha256 hex of the canonical form: canonical JSON (sorted keys, normalized numbers, no
   * insignificant whitespace) when `raw` parses, else of the exact text prefixed so the two
   * never collide.
   */
  digest: string;
  /**
   * What the instrumentation declared the arguments to be, when it declares it: `json` for
   * attributes specified as JSON (GenAI `gen_ai.tool.call.arguments`, AI SDK `ai.toolCall.args`,
   * OpenInference `input.value` with `input.mime_type: application/json`), `text` where its
   * convention says text (OpenInference without a JSON mime type). Absent: not declared.
   */
  declared?: ArgsFormat;
}

/** A declared format of captured tool arguments. */
export type ArgsFormat = 'json' | 'text';

/** A tool call an LLM output asked for, by what identifies it (at least one of the two). */
export interface RequestedToolCall {
  id?: string;
  name?: string;
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
  args?: ToolArgs;
  /** The tool result (tools) or the output text (llm, agent) as captured. */
  result?: string;
  /** Input text other than tool args (llm prompt messages, agent input), as captured. */
  input?: string;
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
