import { z } from 'zod';
import { internalField } from './internal-field.ts';

/**
 * The `values` of the layered walk's record observations (`judge/walk/walk-findings.ts`),
 * declared key by key with their audience, like `TraceQuestionValuesSchema`: the audience strip
 * reads a record with these strict schemas, so a key the walk adds without declaring it here
 * is refused loudly (`AudienceError`) instead of leaking.
 */

const verdictRecommendation = z.json();

/**
 * The internal fields of one judge call's answer, in the order a record carries them: the
 * certificate it acted under, the models asked and answering, its failure, ledger key and
 * receipt. `call`: the layer's judge or its verifier.
 */
function callInternals(call: 'judge' | 'verifier', certificate: string, ledgerKey: string) {
  return {
    certificate_id: internalField(z.string().nullable(), certificate),
    requested_model: internalField(z.string().nullable(), `the ${call} model asked for`),
    served_model: internalField(z.string().nullable(), `the ${call} model that answered`),
    failure: internalField(z.json(), `the ${call} call's failure (provider text may name models and endpoints)`),
    ledger_key: internalField(z.json(), ledgerKey),
    receipt: internalField(z.json(), `tokens and cost of the ${call} call`),
  };
}

/** The verifier's reading of a layer answer: not asked (null), not judged, or judged. */
const VerificationSchema = z.union([
  z.null(),
  z.strictObject({ fate: z.enum(['refused', 'deferred']), reason: z.string() }),
  z.strictObject({
    fate: z.literal('judged'),
    answer: z.string().nullable(),
    recommendation: verdictRecommendation.nullable(),
    ...callInternals('verifier', "the verifier's calibration certificate id", "the verifier's durable ledger key"),
  }),
]);

/** `layer-question`: one layer's answer on one window, its verification and final recommendation. */
export const LayerQuestionValuesSchema = z.strictObject({
  walk_layer: z.string(),
  question_id: z.string(),
  question_version: z.string(),
  /** The option the judge chose; null when no valid answer came. */
  answer: z.string().nullable(),
  probabilities: z.json(),
  /** The support id the model selected (recorded, never promoted into evidence) and the event uris. */
  support: z.json(),
  /** L4: the gap-kind answer. */
  gap_answer: z.string().nullable().optional(),
  recommendation: z.json(),
  primary_recommendation: z.json(),
  verification: VerificationSchema,
  window_id: z.string(),
  window_kind: z.string(),
  window_limitations: z.json(),
  ...callInternals('judge', 'the calibration certificate id', 'the durable ledger key (decision point, run id, invocation id)'),
});

/** `layered-walk`: the walk summary's stop decision, its criteria, its conflicts and what it paid. */
export const LayeredWalkValuesSchema = z.strictObject({
  stop: z.json(),
  criteria: z.json(),
  conflicts: z.number().int().min(0),
  cost: internalField(z.json(), 'judge calls, attempts and tokens the walk paid for'),
});

/** `layer-conflict`: two layers that disagree, surfaced for a human. */
export const LayerConflictValuesSchema = z.strictObject({
  kind: z.string(),
  layers: z.array(z.string()),
  verdicts: z.array(z.string()),
  detail: z.string(),
  audience: z.string(),
  recommendation: z.json(),
});
