import { z } from 'zod';
import { ACTIONS } from '../decision-policy.ts';
import { ANSWER_OPTIONS } from '../questions.ts';

export const LEDGER_VERSION = 1;

/** `(point, runId, invocationId)`: the key exact replay and conflicts are decided on. */
export const LedgerKeySchema = z.strictObject({
  /** Decision point id and version, e.g. `trace-questions@1`. */
  point: z.string().min(1),
  /** The trajectory key. */
  runId: z.string().min(1),
  /** The window id and the trajectory revision. */
  invocationId: z.string().min(1),
});
export type LedgerKey = z.infer<typeof LedgerKeySchema>;

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

/** The digests an invocation is identified by; any difference under one key is a conflict. */
export const InputDigestsSchema = z.strictObject({
  /** Everything below together. */
  input: hex64,
  /** The window as sent (events, limitations, kind). */
  state: hex64,
  /** Requested model and request options (max tokens, logprobs). */
  request: hex64,
  /** Questions, option order and request contract. */
  definition: hex64,
  /** Window extraction policy. */
  windowPolicy: hex64,
  /**
   * Evaluator identity (endpoint, model, retry and pricing policy; see evaluator-identity.ts).
   * Absent on intents written before it was bound: such a key now conflicts, naming `evaluator`.
   */
  evaluator: hex64.optional(),
  /** Decision policy and minimum kappa. */
  decisionPolicy: hex64,
  /** Installed certificate identities by question (sorted), so a new certificate is a new input. */
  certificates: hex64,
});
export type InputDigests = z.infer<typeof InputDigestsSchema>;

/** Usage as the provider reported it; null = not reported (unknown, possibly billed). */
const usage = {
  promptTokens: z.int().nullable(),
  completionTokens: z.int().nullable(),
  totalTokens: z.int().nullable(),
  cost: z.number().nullable(),
  currency: z.string().nullable(),
};

/** One physical attempt's usage. */
export const AttemptReceiptSchema = z.strictObject({
  outcome: z.enum(['answered', 'http', 'timeout', 'network', 'cancelled', 'bad-response']),
  status: z.int().nullable(),
  ...usage,
});

/** One invocation's usage: summed over its attempts (`receipts.ts`). */
export const ReceiptSchema = z.strictObject({
  ...usage,
  attempts: z.int().min(0),
  /** Every physical attempt; absent on results written before attempts were itemised. */
  perAttempt: z.array(AttemptReceiptSchema).optional(),
});

const probabilities = z.partialRecord(z.enum(ANSWER_OPTIONS), z.number()).nullable();

const RecommendationSchema = z.strictObject({
  action: z.enum(ACTIONS),
  route: z.literal('coordinator-alarm').nullable(),
  reason: z.string().min(1),
});

/** One question's recorded answer and what it recommends. */
export const AnswerRecordSchema = z.strictObject({
  questionId: z.string().min(1),
  questionVersion: z.string().min(1),
  option: z.enum(ANSWER_OPTIONS).nullable(),
  probabilities,
  unseenBound: z.number().nullable(),
  /** Selected supporting event id, `unresolved`, or null when there was no answer. */
  support: z.string().nullable(),
  recommendation: RecommendationSchema,
  certificateId: z.string().nullable(),
  /**
   * The support choice is record-only (decision-policy.ts `SUPPORT_POLICY`): the probability of
   * the tokens that wrote the chosen id (null without logprobs or without an answer), and its
   * recommendation (`record`, reason `record-only`; escalate when there was no answer). Both
   * absent on results written before support choices had a policy.
   */
  supportProbability: z.number().min(0).max(1).nullable().optional(),
  supportRecommendation: RecommendationSchema.optional(),
});
export type AnswerRecord = z.infer<typeof AnswerRecordSchema>;

const windowFacts = z.strictObject({
  windowId: z.string().min(1),
  kind: z.enum(['event', 'turn', 'agent']),
  /** Event id → evidence URIs, in window order: the immutable map support ids point into. */
  eventMap: z.array(z.strictObject({ id: z.string(), uris: z.array(z.string()) })),
});

export const IntentRecordSchema = z.strictObject({
  v: z.literal(LEDGER_VERSION),
  type: z.literal('intent'),
  key: LedgerKeySchema,
  digests: InputDigestsSchema,
  window: windowFacts,
  requestedModel: z.string().min(1),
  /** Unique per intent: which process wrote it. */
  owner: z.string().min(1),
  /** Wall time of writing; never part of identity. */
  recordedAt: z.string(),
});

export const ResultRecordSchema = z.strictObject({
  v: z.literal(LEDGER_VERSION),
  type: z.literal('result'),
  key: LedgerKeySchema,
  inputDigest: hex64,
  owner: z.string().min(1),
  requestedModel: z.string().min(1),
  servedModel: z.string().nullable(),
  windowPolicyDigest: hex64,
  /**
   * What a certificate computed from this answer binds besides the question and models: the
   * layer, the request contract and the evaluator. Absent on results written before they were
   * bound; `trajwatch calibrate` issues no certificate from such answers.
   */
  windowKind: z.enum(['event', 'turn', 'agent']).optional(),
  requestContractDigest: hex64.optional(),
  evaluatorDigest: hex64.optional(),
  failure: z.strictObject({ kind: z.string(), status: z.int().optional(), message: z.string() }).nullable(),
  answers: z.array(AnswerRecordSchema),
  recommendation: RecommendationSchema,
  receipt: ReceiptSchema,
  recordedAt: z.string(),
});

/** A window asked for and not judged: refused by a cap, or deferred by the budget. */
export const SkipRecordSchema = z.strictObject({
  v: z.literal(LEDGER_VERSION),
  type: z.enum(['refused', 'deferred']),
  runId: z.string(),
  revision: z.int(),
  windowKind: z.string(),
  anchor: z.string(),
  windowId: z.string().nullable(),
  triggers: z.array(z.string()),
  reason: z.string().min(1),
  detail: z.string(),
  recordedAt: z.string(),
});

export const LedgerRecordSchema = z.discriminatedUnion('type', [IntentRecordSchema, ResultRecordSchema, SkipRecordSchema]);

export type IntentRecord = z.infer<typeof IntentRecordSchema>;
export type ResultRecord = z.infer<typeof ResultRecordSchema>;
export type SkipRecord = z.infer<typeof SkipRecordSchema>;
export type LedgerRecord = z.infer<typeof LedgerRecordSchema>;
