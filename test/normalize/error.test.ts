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
