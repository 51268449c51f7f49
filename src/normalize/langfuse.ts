import type { Span } from '../ingest/span.ts';
import { idAttr, textAttr } from './attributes.ts';
import { baseStep, fill } from './base-step.ts';
import type { ConventionMapper } from './mapper.ts';
import { kindAttribute } from './kind-attribute.ts';
import type { Step } from './step.ts';
import { toToolArgs } from './tool-args.ts';

/**
 * `langfuse.observation.type` → step kind, from the Langfuse Python SDK's observation types
 * (`langfuse/_client/constants.py`: generation and embedding are generation-like; span, agent,
 * tool, chain, retriever, evaluator, guardrail span-like; and event). Unknown types, span,
 * chain, evaluator, guardrail and event are `other`.
 */
const OBSERVATION_TYPE = kindAttribute(
  'langfuse.observation.type',
  { tool: 'tool', generation: 'llm', agent: 'agent', retriever: 'retrieval', embedding: 'retrieval' },
  (type) => type.toLowerCase(),
);

/**
 * Langfuse's OTel-based Python SDK (read from langfuse 5.2's source): `@observe(as_type=…)`,
 * `start_observation`, and its integrations (`langfuse.openai`). Claims spans with `langfuse.observation.type`
 * that no GenAI reading claimed first (`gen_ai.operation.name` wins: an app may add Langfuse
 * attributes to GenAI spans).
 *
 * A tool observation is named by its span name (`@observe(name=…)`, else the function name);
 * its input `langfuse.observation.input` is what the SDK serialized — for `@observe`, the
 * recorded call `{"args": [...], "kwargs": {...}}` (`_get_input_from_func_args`), unwrapped by
 * shape like every recorded call; a string input is kept as the string. Not declared JSON: the
 * SDK writes a string input as it is. `langfuse.observation.output` is the result (tools) or
 * output (others); `langfuse.observation.model.name` the model. A failure is `level: ERROR`
 * with the OTel status set to ERROR by the SDK, read by `baseStep`. The session is
 * `session.id` (`propagate_attributes(session_id=…)`), read by `baseStep` like every mapper.
 * Generation output messages are not read for requested tool calls.
 */
export const langfuseMapper: ConventionMapper = {
  name: 'langfuse',
  matches: OBSERVATION_TYPE.claims,
  toStep(span: Span): Step {
    const attributes = span.attributes;
    const kind = OBSERVATION_TYPE.kindOf(span);
    const step = baseStep(span, 'langfuse', kind);
    const name = span.name.trim() === '' ? undefined : span.name;
    fill(step, 'result', textAttr(attributes, 'langfuse.observation.output'));
    fill(step, 'model', idAttr(attributes, 'langfuse.observation.model.name'));
    const input = attributes['langfuse.observation.input'];
    if (kind === 'tool') {
      fill(step, 'toolName', name);
      if (input !== undefined && input !== null) step.args = toToolArgs(input);
    } else {
      fill(step, 'input', textAttr(attributes, 'langfuse.observation.input'));
      if (kind === 'agent') fill(step, 'agentName', name);
    }
    return step;
  },
};
