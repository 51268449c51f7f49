import type { Span } from '../ingest/span.ts';
import { baseStep, fill } from './base-step.ts';
import type { ConventionMapper } from './mapper.ts';
import { readAnySessionId } from './session.ts';
import type { Step } from './step.ts';

/**
 * The fallback for spans no convention claims (framework wrappers, HTTP calls, TRAIL's
 * `patronus.sdk` spans): kind `other`, with the error and any known session id still read,
 * so that failures and trajectory keys are not lost.
 */
export const genericMapper: ConventionMapper = {
  name: 'generic',
  matches(): boolean {
    return true;
  },
  toStep(span: Span): Step {
    const step = baseStep(span, 'generic', 'other');
    fill(step, 'sessionId', readAnySessionId(span.attributes));
    return step;
  },
};
