import type { Span } from '../ingest/span.ts';
import { applyContentEvents } from './content-events.ts';
import { genaiMapper } from './genai.ts';
import { genericMapper } from './generic.ts';
import { langfuseMapper } from './langfuse.ts';
import type { ConventionMapper } from './mapper.ts';
import { openinferenceMapper } from './openinference.ts';
import { openllmetryMapper } from './openllmetry.ts';
import type { Step } from './step.ts';
import { decodeTexts, referToTexts, restoreTexts } from './step-texts.ts';
import { vercelAiMapper } from './vercel-ai.ts';

/**
 * The mappers in the order they are tried; the first that matches reads the span.
 * 1. openinference — `openinference.span.kind` is an explicit classification.
 * 2. vercel-ai — AI SDK ≤6 operation ids; before genai because these spans carry some
 *    `gen_ai.*` attributes too, and this mapper reads both vocabularies.
 * 3. openllmetry — `traceloop.span.kind` / `llm.request.type`; before genai for the same
 *    reason (its decorator args live in `traceloop.entity.input`).
 * 4. genai — `gen_ai.operation.name` (GenAI ≥1.37, AI SDK 7, pydantic-ai, ADK, Strands).
 * 5. langfuse — `langfuse.observation.type` (Langfuse's OTel SDKs); after genai, because an
 *    app may set Langfuse attributes on GenAI spans, whose GenAI reading is the richer one.
 * 6. generic — everything else; it marks spans of unread conventions (`unread-convention.ts`).
 */
export const MAPPERS: readonly ConventionMapper[] = [openinferenceMapper, vercelAiMapper, openllmetryMapper, genaiMapper, langfuseMapper, genericMapper];

/** The mapper that reads `span`: the first in `MAPPERS` that matches (generic at worst). */
export function selectMapper(span: Span): ConventionMapper {
  for (const mapper of MAPPERS) {
    if (mapper.matches(span)) return mapper;
  }
  return genericMapper;
}

/**
 * Attributes no mapper reads the value of, only whether they are there: OpenInference's
 * flattened message contents (`llm.input_messages.{i}.message.content` and their parts), the
 * whole conversation again on every LLM span beside `input.value`/`output.value`. Their
 * `LongText`s are never decoded (test/ingest/wal/long-texts.test.ts on TRAIL and the
 * output-identity test hold the mappers to it).
 */
export const PRESENCE_ONLY_KEY = /^llm\.(?:input|output)_messages\.\d+\.message\.(?:content|contents\.\d+\.message_content\.text)$/;

const isPresenceOnly = (key: string): boolean => key.startsWith('llm.') && PRESENCE_ONLY_KEY.test(key);

/**
 * One span as a step, read by the first matching convention mapper, then filled from the
 * span's GenAI content events for whatever its attributes lacked (one mechanism for every
 * convention: `content-events.ts`). Never throws; facts the span does not carry are absent.
 * Long texts: the mappers read strings (`decodeTexts`), the step keeps the references
 * (`referToTexts`), and the span its own again (`restoreTexts`).
 */
export function normalizeSpan(span: Span): Step {
  const decoded = decodeTexts(span, isPresenceOnly);
  const step = selectMapper(span).toStep(span);
  if (span.events.length > 0) applyContentEvents(step, span.events);
  if (decoded === undefined) return step;
  referToTexts(step, decoded);
  restoreTexts(decoded);
  return step;
}
