import type { Span } from '../ingest/span.ts';
import type { Step } from './step.ts';

/**
 * Reads one telemetry convention. `matches` must be cheap (a few attribute reads): it runs on
 * every span until a mapper claims it. `toStep` never throws; what it cannot read stays absent.
 */
export interface ConventionMapper {
  /** Written to `Step.convention`, e.g. `genai`, `openinference`. */
  readonly name: string;
  matches(span: Span): boolean;
  toStep(span: Span): Step;
}
