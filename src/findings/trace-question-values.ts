import { z } from 'zod';
import { internalField } from './internal-field.ts';

/**
 * The `values` of a `trace-question` record observation (the judge's findings: one answer to
 * one question about one window, or the computed repetition question). The finding schema
 * keeps `values` an open JSON record; this strict schema is what the audience strip reads it
 * with, so a key the judge adds without declaring it here (and saying whether it is internal)
 * makes every external view fail loudly instead of leaking.
 */
export const TraceQuestionValuesSchema = z
  .object({
    question_id: z.string().optional(),
    question_version: z.string().optional(),
    options: z.array(z.string()).optional(),
    /** The option the judge chose; null when no valid answer came. */
    answer: z.string().nullable().optional(),
    probabilities: z.json().optional(),
    support: z.json().optional(),
    recommendation: z.json().optional(),
    window_recommendation: z.json().optional(),
    window_id: z.string().optional(),
    window_kind: z.string().optional(),
    window_triggers: z.array(z.string()).optional(),
    window_limitations: z.json().optional(),
    /** Computed repetition question: its status and repeated groups. */
    status: z.string().optional(),
    groups: z.json().optional(),
    /** Computed repetition question, `unavailable`: why (incomplete-capture reasons, capture gaps touching the window). */
    reasons: z.array(z.string()).optional(),
    certificate_id: internalField(z.string().nullable().optional(), 'the calibration certificate id'),
    window_policy_digest: internalField(z.string().nullable().optional(), 'the window policy digest'),
    requested_model: internalField(z.string().nullable().optional(), 'the judge model asked for'),
    served_model: internalField(z.string().nullable().optional(), 'the judge model that answered'),
    receipt: internalField(z.json().optional(), 'tokens and cost of the judge call'),
    failure: internalField(z.json().optional(), "the judge call's failure (provider text may name models and endpoints)"),
    ledger_key: internalField(z.json().optional(), 'the durable ledger key (decision point, run id, invocation id)'),
  })
  .strict();

export type TraceQuestionValues = z.infer<typeof TraceQuestionValuesSchema>;
