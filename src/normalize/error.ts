import type { Span, SpanEvent } from '../ingest/span.ts';
import { idAttr } from './attributes.ts';
import type { StepError } from './step.ts';

/**
 * The step's error, from the most specific evidence the span carries:
 * 1. an `exception` event (`exception.type`, `exception.message`): the last one, since the
 *    exception that ended the span is recorded last; `error.type`, when set, names the type
 *    (the instrumentation chose it deliberately, while `exception.type` is often a language's
 *    generic class such as JavaScript's `Error`), and a missing message comes from the status;
 * 2. the `error.type` attribute (GenAI; MCP's `tool_error` included), with the status message;
 * 3. status code 2 (error), with its message.
 * An exception event counts even under a non-error status: the instrumentation saw it happen.
 * Empty strings are absent. A placeholder `error.type` (see `errorTypeName`) still says the
 * step failed, but names no type: the exception's type is used, else the type is absent.
 * `undefined` when the span shows no error.
 */
export function readStepError(span: Span): StepError | undefined {
  const exception = lastException(span.events);
  const errorTypeAttr = idAttr(span.attributes, 'error.type');
  const errorType = errorTypeName(errorTypeAttr);
  const statusMessage = span.status.message === '' ? undefined : span.status.message;

  if (exception !== undefined) {
    const error: StepError = { source: 'exception' };
    const type = errorType ?? errorTypeName(idAttr(exception.attributes, 'exception.type'));
    const message = idAttr(exception.attributes, 'exception.message') ?? statusMessage;
    if (type !== undefined) error.type = type;
    if (message !== undefined) error.message = message;
    return error;
  }
  if (errorTypeAttr !== undefined) {
    const error: StepError = { source: 'error.type' };
    if (errorType !== undefined) error.type = errorType;
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

/**
 * Values emitters write in a type field when they have no type to name: GenAI's `_OTHER`
 * fallback, `unknown` (Mastra), and absent values stringified (`undefined`, `null`, Python's
 * `None`). Compared case-insensitively.
 */
const PLACEHOLDER_TYPES = new Set(['_other', 'unknown', 'undefined', 'null', 'none']);

/**
 * An error type as a type name, or `undefined` when the value is absent or only a
 * placeholder: a placeholder is not a type two failures could share or differ by.
 */
export function errorTypeName(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' || PLACEHOLDER_TYPES.has(trimmed.toLowerCase()) ? undefined : trimmed;
}

function lastException(events: readonly SpanEvent[]): SpanEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event !== undefined && event.name === 'exception') return event;
  }
  return undefined;
}
