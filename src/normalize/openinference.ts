import type { Span } from '../ingest/span.ts';
import { idAttr, textAttr } from './attributes.ts';
import { baseStep, fill } from './base-step.ts';
import type { ConventionMapper } from './mapper.ts';
import { indexedRequestedToolCalls, OPENINFERENCE_OUTPUT_LAYOUT } from './requested-tool-calls.ts';
import { kindAttribute } from './kind-attribute.ts';
import type { ArgsFormat, Step } from './step.ts';
import { addToolSchema, structuredValue, toolSchemasFromIndexed } from './tool-schemas.ts';
import { toToolArgs } from './tool-args.ts';

/**
 * `openinference.span.kind` (upper-cased: some emitters write lower case) → step kind.
 * An LLM span that shows no model request is `other` too (see `madeModelRequest`).
 * CHAIN is `other` for every framework, smolagents included: LangChain marks any runnable a
 * CHAIN, and smolagents' "Step N" CHAIN spans are iterations inside an AGENT span, so calling
 * them `agent` would count one agent run many times. Their errors (e.g. failed code
 * execution) are still read. GUARDRAIL, EVALUATOR, PROMPT and unknown kinds are `other`.
 */
const SPAN_KIND = kindAttribute(
  'openinference.span.kind',
  { LLM: 'llm', TOOL: 'tool', AGENT: 'agent', RETRIEVER: 'retrieval', EMBEDDING: 'retrieval', RERANKER: 'retrieval' },
  (kind) => kind.toUpperCase(),
);

/**
 * OpenInference (Arize): LangChain, LlamaIndex, smolagents, CrewAI, OpenAI Agents... Claims
 * spans that carry `openinference.span.kind`.
 *
 * Tool args come from `input.value`, kept exactly as captured (smolagents writes
 * `{"args": [...], "sanitize_inputs_outputs": ..., "kwargs": {...}}`); `tool.parameters` is a
 * schema, not the call's arguments, so it goes to `toolSchemas`. The args are declared JSON only
 * under `input.mime_type: application/json`; OpenInference specifies a missing mime type as
 * text (LangGraph records a one-argument tool's input as the bare string `Paris`). `output.value` is the result
 * for every kind; `input.value` is the input of every kind but tool.
 */
export const openinferenceMapper: ConventionMapper = {
  name: 'openinference',
  matches: SPAN_KIND.claims,
  toStep(span: Span): Step {
    const attributes = span.attributes;
    const declared = SPAN_KIND.kindOf(span);
    const preparing = declared === 'llm' && !madeModelRequest(attributes);
    const kind = preparing ? 'other' : declared;
    const step = baseStep(span, 'openinference', kind);

    const toolName = idAttr(attributes, 'tool.name');
    fill(step, 'toolName', toolName);
    fill(step, 'toolCallId', idAttr(attributes, 'tool_call.id') ?? idAttr(attributes, 'tool.id'));
    fill(step, 'result', textAttr(attributes, 'output.value'));
    fill(step, 'agentName', idAttr(attributes, 'agent.name'));
    fill(step, 'model', idAttr(attributes, 'llm.model_name'));

    if (kind === 'tool') {
      const input = attributes['input.value'];
      if (input !== undefined && input !== null) step.args = toToolArgs(input, declaredFormat(attributes));
      const parameters = attributes['tool.parameters'];
      if (toolName !== undefined && parameters !== undefined && parameters !== null) {
        const schema = structuredValue(parameters);
        if (schema !== undefined) step.toolSchemas = addToolSchema(undefined, toolName, schema);
      }
    } else {
      // A span declared LLM that made no request is preparing the model's prompt: like a
      // prompt, its input is model-bound content, not a step's input (never a carrier).
      if (!preparing) fill(step, 'input', textAttr(attributes, 'input.value'));
      // Tool definitions are declarations whether or not this span sent them.
      if (declared === 'llm') fill(step, 'toolSchemas', toolSchemasFromIndexed(attributes, 'llm.tools', '.tool.json_schema'));
      if (kind === 'llm') fill(step, 'requestedToolCalls', indexedRequestedToolCalls(attributes, OPENINFERENCE_OUTPUT_LAYOUT));
    }
    return step;
  },
};

/** `input.mime_type` as a declared format: JSON for `application/json` (and `+json` types), else text. */
function declaredFormat(attributes: Span['attributes']): ArgsFormat {
  const mime = idAttr(attributes, 'input.mime_type')?.split(';')[0]?.trim().toLowerCase();
  return mime !== undefined && (mime === 'application/json' || mime.endsWith('+json')) ? 'json' : 'text';
}

/**
 * Attribute prefixes that only a model request writes: the messages sent or received, the
 * prompts, the token counts, the finish reason.
 */
const REQUEST_EVIDENCE = ['llm.input_messages.', 'llm.output_messages.', 'llm.prompts', 'llm.token_count.', 'llm.finish_reason'];

/**
 * Whether an LLM span made a model request. OpenInference's LlamaIndex instrumentation marks
 * every instrumented method of an LLM object an LLM span (its span kind follows the instance),
 * so `OpenAI._prepare_chat_with_tools`, which only assembles the arguments, is an LLM span
 * beside the `OpenAI.astream_chat` that sends them: both carry the model name, invocation
 * parameters, `input.value` and `output.value`, but only the request carries messages,
 * prompts, token counts or a finish reason (they come from LlamaIndex's chat and completion
 * events, sent by the method that calls the model). A span with none of them made no request
 * and is not an llm step; should an instrumentation hide both messages and token counts, its
 * requests are read as `other` too, which claims nothing.
 */
function madeModelRequest(attributes: Span['attributes']): boolean {
  for (const key in attributes) {
    for (const prefix of REQUEST_EVIDENCE) if (key.startsWith(prefix)) return true;
  }
  return false;
}
