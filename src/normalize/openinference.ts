import type { Span } from '../ingest/span.ts';
import { idAttr, textAttr } from './attributes.ts';
import { baseStep, fill } from './base-step.ts';
import type { ConventionMapper } from './mapper.ts';
import { indexedRequestedToolCalls, OPENINFERENCE_OUTPUT_LAYOUT } from './requested-tool-calls.ts';
import type { ArgsFormat, Step, StepKind } from './step.ts';
import { addToolSchema, structuredValue, toolSchemasFromIndexed } from './tool-schemas.ts';
import { toToolArgs } from './tool-args.ts';

/**
 * `openinference.span.kind` (upper-cased: some emitters write lower case) → step kind.
 * CHAIN is `other` for every framework, smolagents included: LangChain marks any runnable a
 * CHAIN, and smolagents' "Step N" CHAIN spans are iterations inside an AGENT span, so calling
 * them `agent` would count one agent run many times. Their errors (e.g. failed code
 * execution) are still read. GUARDRAIL, EVALUATOR, PROMPT and unknown kinds are `other`.
 */
const KIND_BY_SPAN_KIND: Readonly<Record<string, StepKind>> = {
  LLM: 'llm',
  TOOL: 'tool',
  AGENT: 'agent',
  RETRIEVER: 'retrieval',
  EMBEDDING: 'retrieval',
  RERANKER: 'retrieval',
};

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
  matches(span: Span): boolean {
    return typeof span.attributes['openinference.span.kind'] === 'string';
  },
  toStep(span: Span): Step {
    const attributes = span.attributes;
    const spanKind = (idAttr(attributes, 'openinference.span.kind') ?? '').toUpperCase();
    const kind = Object.hasOwn(KIND_BY_SPAN_KIND, spanKind) ? (KIND_BY_SPAN_KIND[spanKind] as StepKind) : 'other';
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
      fill(step, 'input', textAttr(attributes, 'input.value'));
      if (kind === 'llm') {
        fill(step, 'toolSchemas', toolSchemasFromIndexed(attributes, 'llm.tools', '.tool.json_schema'));
        fill(step, 'requestedToolCalls', indexedRequestedToolCalls(attributes, OPENINFERENCE_OUTPUT_LAYOUT));
      }
    }
    return step;
  },
};

/** `input.mime_type` as a declared format: JSON for `application/json` (and `+json` types), else text. */
function declaredFormat(attributes: Span['attributes']): ArgsFormat {
  const mime = idAttr(attributes, 'input.mime_type')?.split(';')[0]?.trim().toLowerCase();
  return mime !== undefined && (mime === 'application/json' || mime.endsWith('+json')) ? 'json' : 'text';
}
