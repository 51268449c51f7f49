import type { Span } from '../ingest/span.ts';
import { idAttr, textAttr } from './attributes.ts';
import { baseStep, fill } from './base-step.ts';
import { readGenaiFacts } from './genai.ts';
import { kindIn } from './kind-attribute.ts';
import type { ConventionMapper } from './mapper.ts';
import { indexedRequestedToolCalls, OPENLLMETRY_COMPLETION_LAYOUT } from './requested-tool-calls.ts';
import { traceloopToolNameFromSpanName } from './span-name-tool.ts';
import type { Step, StepKind } from './step.ts';
import { addToolSchema, structuredValue, type ToolSchemas } from './tool-schemas.ts';
import { toToolArgs } from './tool-args.ts';

/**
 * Decorator kinds: `workflow` and `agent` are agent runs, `tool` is a tool call, `task` (a
 * plain decorated function) is other.
 */
const KIND_BY_SPAN_KIND: Readonly<Record<string, StepKind>> = { workflow: 'agent', agent: 'agent', tool: 'tool', task: 'other' };

/**
 * OpenLLMetry (Traceloop). Claims decorator spans (`traceloop.span.kind`) and legacy LLM spans
 * (`llm.request.type`). It runs before the GenAI mapper because its spans also carry GenAI
 * attributes, which it reads for any fact its own attributes lack.
 *
 * Decorator spans: `traceloop.entity.input` is the tool's args for tool spans (kept as
 * captured, `{"args": [...], "kwargs": {...}}`) and the input of other kinds;
 * `traceloop.entity.output` is the result. Legacy LLM spans: `llm.request.type` embedding and
 * rerank are retrieval, anything else llm; the result is the first completion's content
 * (`gen_ai.completion.0.content`); the prompt is flattened across `gen_ai.prompt.{i}.*`
 * attributes and is left absent rather than re-assembled.
 */
export const openllmetryMapper: ConventionMapper = {
  name: 'openllmetry',
  matches(span: Span): boolean {
    return typeof span.attributes['traceloop.span.kind'] === 'string' || typeof span.attributes['llm.request.type'] === 'string';
  },
  toStep(span: Span): Step {
    const attributes = span.attributes;
    const spanKind = idAttr(attributes, 'traceloop.span.kind');
    const step = spanKind === undefined ? legacyLlmStep(span) : decoratorStep(span, spanKind);
    readGenaiFacts(span, step);
    return step;
  },
};

function decoratorStep(span: Span, spanKind: string): Step {
  const attributes = span.attributes;
  const kind = kindIn(KIND_BY_SPAN_KIND, spanKind);
  const step = baseStep(span, 'openllmetry', kind);
  const entityName = idAttr(attributes, 'traceloop.entity.name');
  fill(step, 'result', textAttr(attributes, 'traceloop.entity.output'));
  if (kind === 'tool') {
    fill(step, 'toolName', idAttr(attributes, 'gen_ai.tool.name') ?? entityName ?? traceloopToolNameFromSpanName(span.name));
    const input = attributes['traceloop.entity.input'];
    if (input !== undefined && input !== null) step.args = toToolArgs(input);
    return step;
  }
  fill(step, 'input', textAttr(attributes, 'traceloop.entity.input'));
  if (kind === 'agent') fill(step, 'agentName', idAttr(attributes, 'gen_ai.agent.name') ?? entityName);
  return step;
}

function legacyLlmStep(span: Span): Step {
  const attributes = span.attributes;
  const requestType = idAttr(attributes, 'llm.request.type');
  const kind: StepKind = requestType === 'embedding' || requestType === 'rerank' ? 'retrieval' : 'llm';
  const step = baseStep(span, 'openllmetry', kind);
  fill(step, 'result', textAttr(attributes, 'gen_ai.completion.0.content'));
  if (kind === 'llm') {
    fill(step, 'toolSchemas', legacyFunctionSchemas(span));
    fill(step, 'requestedToolCalls', indexedRequestedToolCalls(attributes, OPENLLMETRY_COMPLETION_LAYOUT));
  }
  return step;
}

/** `llm.request.functions.{i}.name` / `.parameters` (JSON text), until the first missing index. */
function legacyFunctionSchemas(span: Span): ToolSchemas | undefined {
  const attributes = span.attributes;
  let schemas: ToolSchemas | undefined;
  for (let i = 0; ; i++) {
    const name = idAttr(attributes, `llm.request.functions.${i}.name`);
    if (name === undefined) return schemas;
    const parameters = attributes[`llm.request.functions.${i}.parameters`];
    const schema = parameters === undefined || parameters === null ? undefined : structuredValue(parameters);
    if (schema !== undefined) schemas = addToolSchema(schemas, name, schema);
  }
}
