import type { Attributes } from '../ingest/span.ts';
import { firstIdAttr } from './attributes.ts';

/**
 * Every attribute known to carry a conversation or session id, in precedence order. Session
 * identity is not a per-convention matter: `baseStep` reads this one list for every mapper, so
 * a span is keyed the same whichever mapper claims it (a Strands span with `session.id` but no
 * `gen_ai.conversation.id` joins its session as an OpenInference span does).
 *
 * Precedence: the GenAI standard first, then the de-facto standard `session.id` (OpenInference
 * `SpanAttributes.SESSION_ID`, also written by Strands and Langfuse's OTel SDKs; OpenInference's
 * LangChain instrumentation writes it from the run metadata's `session_id`, `conversation_id`
 * or `thread_id`, so a LangGraph checkpointer's `configurable.thread_id`, which LangGraph copies
 * into the metadata, arrives here), then vendor keys (Google ADK, Langfuse, Microsoft's agent
 * hosting, which writes `microsoft.session.id` beside a different `gen_ai.conversation.id`),
 * then free-form metadata conventions (AI SDK `telemetry.metadata`, Traceloop association
 * properties, where LangGraph's `thread_id` lands under OpenLLMetry). A span naming different ids under two keys is keyed by
 * the first: the keys can name nested scopes (a conversation inside a user session), so that
 * is not a conflict; two spans of one trace naming different ids is (see the assembler).
 */
export const SESSION_ID_KEYS: readonly string[] = [
  'gen_ai.conversation.id',
  'session.id',
  'gcp.vertex.agent.session_id',
  'langfuse.session.id',
  'microsoft.session.id',
  'ai.telemetry.metadata.sessionId',
  'ai.telemetry.metadata.session_id',
  'ai.telemetry.metadata.conversationId',
  'ai.telemetry.metadata.threadId',
  'traceloop.association.properties.session_id',
  'traceloop.association.properties.conversation_id',
  'traceloop.association.properties.thread_id',
];

/** The first session id among `SESSION_ID_KEYS`. */
export function readAnySessionId(attributes: Attributes): string | undefined {
  return firstIdAttr(attributes, SESSION_ID_KEYS);
}
