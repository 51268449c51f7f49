import type { Span } from '../ingest/span.ts';
import { attrText, idAttr, textAttr } from './attributes.ts';
import { baseStep, fill } from './base-step.ts';
import { kindAttribute } from './kind-attribute.ts';
import type { ConventionMapper } from './mapper.ts';
import { genaiRequestedToolCalls } from './requested-tool-calls.ts';
import { genaiToolNameFromSpanName } from './span-name-tool.ts';
import type { Step } from './step.ts';
import { toolSchemasFromList } from './tool-schemas.ts';
import { toToolArgs } from './tool-args.ts';
import { readVendorToolContent } from './vendor-tool-content.ts';

/**
 * `gen_ai.operation.name` → step kind. Operations not listed (memory operations, Vercel AI
 * SDK 7's `agent_step`, future ones) are `other`: an agent-loop iteration is not an agent run.
 * Nor is `create_agent`: it records an agent being made (AutoGen AgentChat in the agent's
 * constructor, or a remote agent service's definition), which runs nothing, so it is `other`
 * with its agent name. An agent step stands for a run: the run outcome and the sampled agent
 * window are read from agent steps, and a creation span holds neither input nor answer.
 */
const OPERATION = kindAttribute('gen_ai.operation.name', {
  chat: 'llm',
  generate_content: 'llm',
  text_completion: 'llm',
  execute_tool: 'tool',
  invoke_agent: 'agent',
  invoke_workflow: 'agent',
  embeddings: 'retrieval',
  retrieval: 'retrieval',
});

/**
 * OpenTelemetry GenAI semantic conventions ≥1.37 (also Vercel AI SDK 7, pydantic-ai, Google
 * ADK, Strands). Claims spans that carry `gen_ai.operation.name`; other `gen_ai.*` attributes
 * alone do not claim a span (Vercel AI SDK ≤6 and OpenLLMetry set `gen_ai.request.model` too).
 */
export const genaiMapper: ConventionMapper = {
  name: 'genai',
  matches: OPERATION.claims,
  toStep(span: Span): Step {
    const kind = OPERATION.kindOf(span);
    const step = baseStep(span, 'genai', kind);
    readGenaiFacts(span, step);
    if (kind === 'tool') fill(step, 'toolName', genaiToolNameFromSpanName(span.name));
    return step;
  },
};

/**
 * Fills the GenAI facts of `step` that it does not already hold, by its kind. Shared with the
 * mappers whose spans may carry GenAI attributes beside their own (Vercel AI SDK, OpenLLMetry).
 */
export function readGenaiFacts(span: Span, step: Step): void {
  const attributes = span.attributes;
  fill(step, 'toolName', idAttr(attributes, 'gen_ai.tool.name'));
  fill(step, 'toolCallId', idAttr(attributes, 'gen_ai.tool.call.id'));
  fill(step, 'agentName', idAttr(attributes, 'gen_ai.agent.name'));
  fill(step, 'model', idAttr(attributes, 'gen_ai.response.model') ?? idAttr(attributes, 'gen_ai.request.model'));

  if (step.kind === 'tool') {
    const args = attributes['gen_ai.tool.call.arguments'];
    if (step.args === undefined && args !== undefined && args !== null) step.args = toToolArgs(args, 'json'); // specified as JSON
    fill(step, 'result', textAttr(attributes, 'gen_ai.tool.call.result'));
    readVendorToolContent(attributes, step);
    return;
  }
  // Guarded so that serializing structured messages happens only when the fact is still missing.
  // The same facts on the `gen_ai.client.inference.operation.details` event are read by
  // `applyContentEvents` (normalize.ts), after every mapper.
  if (step.input === undefined) fill(step, 'input', attrText(attributes['gen_ai.input.messages']));
  if (step.result === undefined) fill(step, 'result', attrText(attributes['gen_ai.output.messages']));
  if (step.toolSchemas === undefined) fill(step, 'toolSchemas', toolSchemasFromList(attributes['gen_ai.tool.definitions']));
  if (step.kind === 'llm') fill(step, 'requestedToolCalls', genaiRequestedToolCalls(attributes['gen_ai.output.messages']));
}
