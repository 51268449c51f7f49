import { describe, expect, it } from 'vitest';
import { readStepError } from '../../src/normalize/error.ts';
import { exceptionEvent, makeSpan } from './make-span.ts';

describe('readStepError', () => {
  it('is undefined for an unset or ok span', () => {
    expect(readStepError(makeSpan())).toBeUndefined();
    expect(readStepError(makeSpan({ status: { code: 1, message: 'fine' } }))).toBeUndefined();
  });

  it('reads status 2 with its message, omitting an empty one', () => {
    expect(readStepError(makeSpan({ status: { code: 2, message: 'boom' } }))).toEqual({ source: 'status', message: 'boom' });
    expect(readStepError(makeSpan({ status: { code: 2, message: '' } }))).toEqual({ source: 'status' });
  });

  it('prefers error.type over a bare status', () => {
    const span = makeSpan({ status: { code: 2, message: 'rate limited' }, attributes: { 'error.type': '429' } });
    expect(readStepError(span)).toEqual({ source: 'error.type', type: '429', message: 'rate limited' });
  });

  it('prefers the exception event, filling its missing parts from error.type and status', () => {
    const span = makeSpan({
      status: { code: 2, message: 'status text' },
      attributes: { 'error.type': 'TimeoutError' },
      events: [exceptionEvent({ 'exception.stacktrace': '...' })],
    });
    expect(readStepError(span)).toEqual({ source: 'exception', type: 'TimeoutError', message: 'status text' });
  });

  it('reads the last exception event, which ended the span', () => {
    const span = makeSpan({
      status: { code: 2 },
      events: [
        exceptionEvent({ 'exception.type': 'RetryableError', 'exception.message': 'first try' }),
        { name: 'retry', timeUnixNano: 1n, attributes: {} },
        exceptionEvent({ 'exception.type': 'FatalError', 'exception.message': 'gave up' }),
      ],
    });
    expect(readStepError(span)).toEqual({ source: 'exception', type: 'FatalError', message: 'gave up' });
  });

  it('counts an exception event under a non-error status', () => {
    const span = makeSpan({ status: { code: 0 }, events: [exceptionEvent({ 'exception.type': 'KeyError' })] });
    expect(readStepError(span)).toEqual({ source: 'exception', type: 'KeyError' });
  });
});

describe('placeholder error types', () => {
  it('a placeholder error.type still marks the failure, but names no type', () => {
    for (const placeholder of ['_OTHER', 'unknown', 'Unknown', 'undefined', 'null', 'None']) {
      const span = makeSpan({ status: { code: 2, message: 'boom' }, attributes: { 'error.type': placeholder } });
      expect(readStepError(span), placeholder).toEqual({ source: 'error.type', message: 'boom' });
    }
    expect(readStepError(makeSpan({ attributes: { 'error.type': '_OTHER' } }))).toEqual({ source: 'error.type' });
  });

  it('Mastra: error.type "unknown" gives way to the exception event\'s type', () => {
    // As Mastra (run by the framework matrix) records a failed tool: error.type=unknown, exception.type=Error.
    const span = makeSpan({
      status: { code: 2, message: 'order service timed out after 30s' },
      attributes: { 'error.type': 'unknown' },
      events: [exceptionEvent({ 'exception.type': 'Error', 'exception.message': 'order service timed out after 30s' })],
    });
    expect(readStepError(span)).toEqual({ source: 'exception', type: 'Error', message: 'order service timed out after 30s' });
  });

  it('a placeholder exception.type is no type either', () => {
    const span = makeSpan({ status: { code: 2 }, events: [exceptionEvent({ 'exception.type': '_OTHER', 'exception.message': 'x' })] });
    expect(readStepError(span)).toEqual({ source: 'exception', message: 'x' });
  });
});
