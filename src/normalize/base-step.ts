import type { Span } from '../ingest/span.ts';
import { readStepError } from './error.ts';
import { readAnySessionId } from './session.ts';
import type { Step, StepKind } from './step.ts';

/** Shared by every step of a span without events (most of them): one array, not one per step. */
const NO_EVENTS: string[] = Object.freeze([]) as unknown as string[];

/**
 * The part of a step every mapper fills the same way: ids, name, times, status, error,
 * service, session (one precedence list for every convention, `SESSION_ID_KEYS`), provenance
 * (attributes, resource, event names) and size. Attribute and resource
 * objects are shared with the span, not copied: both are read-only from here on.
 */
export function baseStep(span: Span, convention: string, kind: StepKind): Step {
  const step: Step = {
    id: span.spanId,
    traceId: span.traceId,
    kind,
    name: span.name,
    convention,
    startTimeUnixNano: span.startTimeUnixNano,
    endTimeUnixNano: span.endTimeUnixNano,
    statusCode: span.status.code,
    attributes: span.attributes,
    resource: span.resource,
    eventNames: span.events.length === 0 ? NO_EVENTS : span.events.map((event) => event.name),
    encodedBytes: span.encodedBytes,
  };
  if (span.parentSpanId !== undefined && span.parentSpanId !== '') step.parentId = span.parentSpanId;
  const service = span.resource['service.name'];
  if (typeof service === 'string' && service !== '') step.service = service;
  const sessionId = readAnySessionId(span.attributes);
  if (sessionId !== undefined) step.sessionId = sessionId;
  const error = readStepError(span);
  if (error !== undefined) step.error = error;
  return step;
}

/** The optional facts a mapper reads; each is either set to a captured value or absent. */
export type StepFact = 'toolName' | 'toolCallId' | 'args' | 'result' | 'input' | 'model' | 'agentName' | 'sessionId' | 'toolSchemas' | 'requestedToolCalls';

/**
 * Sets `step[key]` when `value` is defined and the step does not hold that fact yet, so a
 * mapper can offer facts in priority order and absent ones never become keys.
 */
export function fill<K extends StepFact>(step: Step, key: K, value: Step[K] | undefined): void {
  if (value !== undefined && step[key] === undefined) step[key] = value;
}
