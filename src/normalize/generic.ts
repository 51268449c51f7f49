import type { Span } from '../ingest/span.ts';
import { baseStep } from './base-step.ts';
import type { ConventionMapper } from './mapper.ts';
import type { Step } from './step.ts';
import { detectUnreadConvention } from './unread-convention.ts';

/**
 * The fallback for spans no convention claims (framework wrappers, HTTP calls, TRAIL's
 * `patronus.sdk` spans): kind `other`, with the error and any known session id still read (by `baseStep`),
 * so that failures and trajectory keys are not lost. A span that says it is tool or model work
 * in a convention no mapper reads keeps kind `other` and gets `unreadConvention`
 * (`detectUnreadConvention`), so that its calls become a capture gap, never silence.
 */
export const genericMapper: ConventionMapper = {
  name: 'generic',
  matches(): boolean {
    return true;
  },
  toStep(span: Span): Step {
    const step = baseStep(span, 'generic', 'other');
    const unread = detectUnreadConvention(span);
    if (unread !== undefined) step.unreadConvention = unread;
    return step;
  },
};
