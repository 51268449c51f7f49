import type { Span } from '../ingest/span.ts';
import { baseStep } from './base-step.ts';
import type { ConventionMapper } from './mapper.ts';
import type { Step } from './step.ts';

/**
 * The fallback for spans no convention claims (framework wrappers, HTTP calls, TRAIL's
 * `patronus.sdk` spans): kind `other`, with the error and any known session id still read (by `baseStep`),
 * so that failures and trajectory keys are not lost.
 */
export const genericMapper: ConventionMapper = {
  name: 'generic',
  matches(): boolean {
    return true;
  },
  toStep(span: Span): Step {
    return baseStep(span, 'generic', 'other');
  },
};
