import type { z } from 'zod';
import { TraceQuestionValuesSchema } from './trace-question-values.ts';
import { LayerConflictValuesSchema, LayeredWalkValuesSchema, LayerQuestionValuesSchema } from './walk-values.ts';

/** What the audience strip needs of a record observation: its strict values schema and what an external view keeps. */
export interface RecordValues {
  /** Strict: a key not declared here (with its audience) makes every external view fail. */
  readonly values: z.ZodType;
  /** The keys an external view must carry unchanged (the answer, the verdicts, the recommendation). */
  readonly kept: readonly string[];
}

/**
 * Every record observation a finding can carry, by name: the finding schema accepts only these
 * names, so a new kind cannot be emitted without declaring its values and their audience here
 * (`test/findings/audience-every-kind.test.ts` then runs a real one through every audience).
 */
export const RECORD_OBSERVATIONS = {
  'trace-question': { values: TraceQuestionValuesSchema, kept: ['question_id', 'question_version', 'answer', 'support', 'recommendation', 'status', 'groups'] },
  'layer-question': {
    values: LayerQuestionValuesSchema,
    kept: ['walk_layer', 'question_id', 'question_version', 'answer', 'support', 'gap_answer', 'recommendation', 'primary_recommendation'],
  },
  'layered-walk': { values: LayeredWalkValuesSchema, kept: ['stop', 'criteria', 'conflicts'] },
  'layer-conflict': { values: LayerConflictValuesSchema, kept: ['kind', 'layers', 'verdicts', 'detail', 'audience', 'recommendation'] },
} as const satisfies Record<string, RecordValues>;

export type RecordObservationName = keyof typeof RECORD_OBSERVATIONS;

/** The declared names (a non-empty tuple, as `z.enum` wants). */
export const RECORD_OBSERVATION_NAMES = Object.keys(RECORD_OBSERVATIONS) as [RecordObservationName, ...RecordObservationName[]];
