import { z } from 'zod';
import { ANSWER_OPTIONS, SEMANTIC_QUESTIONS, type AnswerOption } from './questions.ts';

/** What an answer recommends. `act` routes to `coordinator-alarm`; nothing here performs it. */
export const ACTIONS = ['act', 'escalate', 'record'] as const;
export type Action = (typeof ACTIONS)[number];
export const ALARM_ROUTE = 'coordinator-alarm';

/** The floor on Cohen's kappa for a certificate. Configuration may raise it, never lower it. */
export const MIN_KAPPA = 0.6;

const action = z.enum(ACTIONS);

/** One question's policy: every option mapped to an action, plus the thresholds `act` needs. */
export const QuestionPolicySchema = z
  .strictObject({
    options: z
      .strictObject({
        yes: action.default('act'),
        no: action.default('record'),
        unsure: action.default('escalate'),
        unavailable: action.default('record'),
      })
      .prefault({}),
    /** The chosen option's probability must reach this for `act`. */
    minProbability: z.number().min(0).max(1).default(0.8),
    /** ...and exceed every other option's by at least this much. */
    minMargin: z.number().min(0).max(1).default(0.3),
  })
  .prefault({});

export type QuestionPolicy = z.infer<typeof QuestionPolicySchema>;

const questionPolicies = Object.fromEntries(SEMANTIC_QUESTIONS.map((q) => [q.id, QuestionPolicySchema])) as Record<string, typeof QuestionPolicySchema>;

export const DecisionPolicySchema = z
  .strictObject({
    /** At least `MIN_KAPPA`. */
    minKappa: z.number().min(MIN_KAPPA, `must be at least ${MIN_KAPPA} (it may be raised, never lowered)`).max(1).default(MIN_KAPPA),
    questions: z.strictObject(questionPolicies).prefault({}),
  })
  .prefault({});

export type DecisionPolicy = z.infer<typeof DecisionPolicySchema>;

export interface Recommendation {
  action: Action;
  route: typeof ALARM_ROUTE | null;
  /** A computed policy reason (`calibrated`, `uncalibrated`, `below-probability`...), never model text. */
  reason: string;
}

/** A model's answer to one question. `option` null: no valid answer (provider failure, garbage). */
export interface QuestionAnswer {
  option: AnswerOption | null;
  /** Per option, the probability read from logprobs; null overall when the server gave none. */
  probabilities: Partial<Record<AnswerOption, number>> | null;
  /** Upper bound for options not among the returned top logprobs. */
  unseenBound?: number;
}

/** Whether a valid certificate covers this question for this model, window policy and served model. */
export type Certification = { valid: true; certificateId: string } | { valid: false; reason: string };

const escalate = (reason: string): Recommendation => ({ action: 'escalate', route: null, reason });

/**
 * The policy table for one answer. Pure. `act` needs probabilities, the chosen option at or above
 * `minProbability`, a margin of at least `minMargin` over every other option (ties escalate), and
 * a valid certificate; any shortfall escalates. A `record` answer escalates instead when an
 * act-mapped option is within the margin of it, so "no, but nearly yes" is not filed away.
 */
export function decideQuestion(answer: QuestionAnswer, policy: QuestionPolicy, certification: Certification): Recommendation {
  if (answer.option === null) return escalate('provider-failure');
  const mapped = policy.options[answer.option];
  if (mapped === 'escalate') return escalate('policy');
  const p = answer.probabilities;
  const chosen = p === null ? undefined : (p[answer.option] ?? 0);
  let runnerUp = 0;
  let runnerUpActs = false;
  if (p !== null) {
    for (const o of ANSWER_OPTIONS) {
      if (o === answer.option) continue;
      const v = p[o] ?? answer.unseenBound ?? 0;
      if (v > runnerUp) runnerUp = v;
      if (policy.options[o] === 'act' && chosen !== undefined && chosen - v < policy.minMargin) runnerUpActs = true;
    }
  }
  if (mapped === 'record') {
    if (chosen !== undefined && chosen <= runnerUp) return escalate('tie');
    if (runnerUpActs) return escalate('near-act');
    return { action: 'record', route: null, reason: 'policy' };
  }
  if (!certification.valid) return escalate(certification.reason);
  if (chosen === undefined) return escalate('probabilities-unavailable');
  if (chosen <= runnerUp) return escalate('tie');
  if (chosen < policy.minProbability) return escalate('below-probability');
  if (chosen - runnerUp < policy.minMargin) return escalate('below-margin');
  return { action: 'act', route: ALARM_ROUTE, reason: 'calibrated' };
}

/**
 * A record-only policy (the seed's `recordOnly: true`): it captures an ancillary choice without
 * routing authority. Every option records; it can carry no certificate and has no thresholds.
 * A valid answer records with reason `record-only`; no answer (a provider failure, garbage)
 * still escalates. It never bypasses the calibration or thresholds of another question.
 */
export const RecordOnlyPolicySchema = z.strictObject({
  recordOnly: z.literal(true, { error: 'a record-only policy must say recordOnly: true' }),
  /** Every option's action: `record`, and nothing else. */
  options: z.record(z.string().min(1), z.literal('record', { error: 'every option of a record-only policy must record (no act, no escalate)' })),
});
export type RecordOnlyPolicy = z.infer<typeof RecordOnlyPolicySchema>;

/**
 * The policy of every support choice (`<question>.support`): which event supports the answer,
 * an event id of the window or `unresolved`. Record-only; its options are the window's event
 * ids, so they are named here by class.
 */
export const SUPPORT_POLICY: RecordOnlyPolicy = RecordOnlyPolicySchema.parse({ recordOnly: true, options: { event: 'record', unresolved: 'record' } });

/** The table for a record-only choice. Pure. `chosen` null: no valid answer. */
export function decideRecordOnly(_policy: RecordOnlyPolicy, chosen: string | null, failure = 'provider-failure'): Recommendation {
  return chosen === null ? escalate(failure) : { action: 'record', route: null, reason: 'record-only' };
}

const RANK: Record<Action, number> = { escalate: 2, act: 1, record: 0 };

/** Across a window's questions: escalate beats act beats record. */
export function combineActions(actions: readonly Action[]): Action {
  let best: Action = 'record';
  for (const a of actions) if (RANK[a] > RANK[best]) best = a;
  return best;
}
