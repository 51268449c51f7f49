import type { Span, SpanEvent } from '../ingest/span.ts';
import { idAttr } from './attributes.ts';
import type { StepError } from './step.ts';

/**
 * The step's error, from the most specific evidence the span carries:
 * 1. an `exception` event (`exception.type`, `exception.message`): the last one, since the
 *    exception that ended the span is recorded last; `error.type`, when set, names the type
 *    (the instrumentation chose it deliberately, while `exception.type` is often a language's
 *    generic class such as JavaScript's `Error`), and a missing message comes from the status;
 * 2. the `error.type` attribute (GenAI; `_OTHER` and MCP's `tool_error` included), with the
 *    status message;
 * 3. status code 2 (error), with its message.
 * An exception event counts even under a non-error status: the instrumentation saw it happen.
 * Empty strings are absent. `undefined` when the span shows no error.
 */
export function readStepError(span: Span): StepError | undefined {
  const exception = lastException(span.events);
  const errorType = idAttr(span.attributes, 'error.type');
  const statusMessage = span.status.message === '' ? undefined : span.status.message;

  if (exception !== undefined) {
    const error: StepError = { source: 'exception' };
    const type = errorType ?? idAttr(exception.attributes, 'exception.type');
    const message = idAttr(exception.attributes, 'exception.message') ?? statusMessage;
    if (type !== undefined) error.type = type;
    if (message !== undefined) error.message = message;
    return error;
  }
  if (errorType !== undefined) {
    const error: StepError = { source: 'error.type', type: errorType };
    if (statusMessage !== undefined) error.message = statusMessage;
    return error;
  }
  if (span.status.code === 2) {
    const error: StepError = { source: 'status' };
    if (statusMessage !== undefined) error.message = statusMessage;
    return error;
  }
  return undefined;
}

function lastException(events: readonly SpanEvent[]): SpanEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event !== undefined && event.name === 'exception') return event;
  }
  return undefined;
}
