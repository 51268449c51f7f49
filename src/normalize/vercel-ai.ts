import type { Span } from '../ingest/span.ts';
import { firstAttr, idAttr, textAttr } from './attributes.ts';
import { baseStep, fill } from './base-step.ts';
import { readGenaiFacts } from './genai.ts';
import type { ConventionMapper } from './mapper.ts';
import { vercelRequestedToolCalls } from './requested-tool-calls.ts';
import type { Step, StepKind } from './step.ts';
import { toolSchemasFromList } from './tool-schemas.ts';
import { toToolArgs } from './tool-args.ts';

/**
 * AI SDK ≤6 names every span after its operation id (`ai.generateText`,
 * `ai.generateText.doGenerate`, `ai.toolCall`, ...), also written to `ai.operationId`.
 */
const OPERATION_ID = /^ai\.(?:toolCall|(?:generate|stream)(?:Text|Object)|embed(?:Many)?)(?:\.do(?:Generate|Stream|Embed))?$/;

/**
 * Operation id → kind. `*.doGenerate`/`*.doStream` are provider calls (llm);
 * `ai.generateText`/`ai.streamText` run the multi-step tool loop (agent);
 * `ai.generateObject`/`ai.streamObject` wrap one structured-output call (other: their
 * doGenerate child is the llm step); embeddings are retrieval, as in GenAI.
 */
function vercelKind(operationId: string): StepKind {
  if (operationId === 'ai.toolCall') return 'tool';
  if (operationId.endsWith('.doGenerate') || operationId.endsWith('.doStream')) return 'llm';
  if (operationId.startsWith('ai.embed')) return 'retrieval';
  if (operationId === 'ai.generateText' || operationId === 'ai.streamText') return 'agent';
  return 'other';
}

/**
 * Vercel AI SDK ≤6 (`experimental_telemetry`). Claims spans whose `ai.operationId` or name is
 * an AI SDK operation id. It runs before the GenAI mapper and, for any fact its own `ai.*`
 * attributes lack, reads the GenAI attributes: AI SDK ≤6 sets `gen_ai.request.model` and
 * friends on provider calls, and a span carrying both vocabularies loses nothing. AI SDK 7
 * (`@ai-sdk/otel`) names spans by GenAI operation and is read by the GenAI mapper.
 */
export const vercelAiMapper: ConventionMapper = {
  name: 'vercel-ai',
  matches(span: Span): boolean {
    const operationId = span.attributes['ai.operationId'];
    return typeof operationId === 'string' ? OPERATION_ID.test(operationId) : OPERATION_ID.test(span.name);
  },
  toStep(span: Span): Step {
    const attributes = span.attributes;
    const operationId = idAttr(attributes, 'ai.operationId') ?? span.name;
    const kind = vercelKind(operationId);
    const step = baseStep(span, 'vercel-ai', kind);

    // functionId names the caller's agent on every span of one call, as gen_ai.agent.name does.
    fill(step, 'agentName', idAttr(attributes, 'ai.telemetry.functionId'));
    fill(step, 'model', idAttr(attributes, 'ai.response.model') ?? idAttr(attributes, 'ai.model.id'));

    if (kind === 'tool') {
      fill(step, 'toolName', idAttr(attributes, 'ai.toolCall.name'));
      fill(step, 'toolCallId', idAttr(attributes, 'ai.toolCall.id'));
      const args = attributes['ai.toolCall.args'];
      if (args !== undefined && args !== null) step.args = toToolArgs(args, 'json'); // JSON.stringify of the call's input
      fill(step, 'result', textAttr(attributes, 'ai.toolCall.result'));
    } else {
      fill(step, 'input', textAttr(attributes, kind === 'llm' ? 'ai.prompt.messages' : 'ai.prompt'));
      const output = firstAttr(attributes, ['ai.response.text', 'ai.response.object', 'ai.response.toolCalls']);
      if (output !== undefined) step.result = typeof output === 'string' ? output : JSON.stringify(output);
      if (kind === 'llm') {
        fill(step, 'toolSchemas', toolSchemasFromList(attributes['ai.prompt.tools']));
        fill(step, 'requestedToolCalls', vercelRequestedToolCalls(attributes['ai.response.toolCalls']));
      }
    }
    readGenaiFacts(span, step);
    return step;
  },
};
