import type { Attributes } from '../ingest/span.ts';
import { firstIdAttr } from './attributes.ts';

/**
 * Every attribute known to carry a conversation or session id, most standard first. Mappers
 * read their own convention's keys; the generic mapper reads all of them.
 */
export const SESSION_ID_KEYS: readonly string[] = [
  'gen_ai.conversation.id',
  'session.id',
  'ai.telemetry.metadata.sessionId',
  'ai.telemetry.metadata.conversationId',
  'traceloop.association.properties.session_id',
  'traceloop.association.properties.conversation_id',
  'traceloop.association.properties.thread_id',
];

/** The first session id among `SESSION_ID_KEYS`. */
export function readAnySessionId(attributes: Attributes): string | undefined {
  return firstIdAttr(attributes, SESSION_ID_KEYS);
}
