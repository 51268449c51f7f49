import { z } from 'zod';
import { L0_PATTERNS } from '../checks/check-result.ts';
import { EvidenceRefSchema } from '../core/evidence-ref.ts';
import { BundleSchema } from './provenance/treatment.ts';
import { SnapshotSchema } from './provenance/conditions.ts';
import { ISO_NANO_PATTERN } from '../core/time.ts';
import { internalField } from './internal-field.ts';
import { RECORD_OBSERVATION_NAMES } from './record-values.ts';

export const FINDING_SCHEMA_VERSION = '1.1.0';
export const SEVERITIES = ['info', 'low', 'medium', 'high'] as const;
/** How far a claim holds: one event, one turn, one agent, the whole run. */
export const FINDING_LAYERS = ['event', 'turn', 'agent', 'run'] as const;

const isoNano = z.string().regex(ISO_NANO_PATTERN, 'ISO-8601 UTC with nine fractional digits');

export const SubjectSchema = z
  .object({
    trajectory_key: z.string().min(1),
    trace_ids: z.array(z.string().regex(/^[0-9a-f]{32}$/)).min(1),
    service: z.string().optional(),
    agent: z.string().optional(),
    revision: z.number().int().min(1),
  })
  .strict();

export const MethodSchema = z
  .object({
    kind: z.enum(['computed', 'judged']),
    name: z.string().min(1),
    version: z.string().min(1),
  })
  .strict();

export const CodeEvalHitSchema = z
  .object({
    pattern: z.enum(L0_PATTERNS),
    anchor: z.string().min(1),
    detail: z.string(),
  })
  .strict();

const AttemptSchema = z.object({ trace_id: z.string(), span_id: z.string() }).strict();

/** Exact tool repetition: distinct physical attempts of one tool with one canonical argument set. */
export const ToolRepetitionObservationSchema = z
  .object({
    kind: z.literal('tool-repetition'),
    tool_name: z.string(),
    args_digest: z.string(),
    /** Distinct span ids; from an incomplete capture a lower bound. */
    count: z.number().int().min(2),
    attempts: z.array(AttemptSchema).min(2),
    capture_complete: z.boolean(),
  })
  .strict();

/**
 * Any other analyst's structured observation (e.g. a judged answer) until it earns a typed
 * member of this union: a declared name plus JSON values. Each name's values schema, with the
 * audience of every key, is declared in `record-values.ts`.
 */
export const RecordObservationSchema = z
  .object({
    kind: z.literal('record'),
    name: z.enum(RECORD_OBSERVATION_NAMES),
    values: z.record(z.string(), z.json()),
  })
  .strict();

export const ObservationSchema = z.discriminatedUnion('kind', [ToolRepetitionObservationSchema, RecordObservationSchema]);

/**
 * On a judged finding re-emitted from its durable ledger record (exact replay) instead of
 * paid for anew. It made zero new physical calls: its `observation.values.receipt` is null and
 * the original call's receipt is kept here as history, already counted once by the first emission.
 */
export const ReplaySchema = z
  .object({
    new_physical_calls: z.literal(0),
    original_receipt: internalField(z.json(), "the original judge call's tokens and cost"),
    /** When the replayed result was recorded (wall time, audit only). */
    original_recorded_at: internalField(z.string(), 'when the ledger recorded the original call (run internal)'),
  })
  .strict();

/** The layers of the walk: L0 code checks, L1 outcome, L2 trajectory, L3 tool outputs, L4 context. */
export const WALK_LAYERS = ['L0', 'L1', 'L2', 'L3', 'L4'] as const;
/**
 * A layer's verdict. `skipped`: the walk stopped before it (never asked); `undecidable`: asked,
 * or needed, and could not be decided (an unsure answer, a refused or deferred window) — the two
 * are different facts. `not-applicable`: the layer has nothing to read (no tool outputs, no
 * outbound sends). L0 is `fired` or `not-fired`: a candidate, never pass or fail.
 */
export const LAYER_VERDICTS = ['pass', 'fail', 'undecidable', 'skipped', 'not-applicable', 'fired', 'not-fired'] as const;

const windowRead = z
  .object({
    window_id: z.string().min(1),
    kind: z.string().min(1),
    anchor: z.string().min(1),
    /** `judged` (with the answer), or why it was not: `refused`/`deferred` with the reason. */
    fate: z.enum(['judged', 'refused', 'deferred', 'not-read']),
    reason: z.string().optional(),
    answer: z.string().nullable().optional(),
  })
  .strict();

export const LayerVerdictSchema = z
  .object({
    layer: z.enum(WALK_LAYERS),
    verdict: z.enum(LAYER_VERDICTS),
    /** A computed reason (`l1-passed-all-answerable`, `window-refused:events-per-window`...), never model text. */
    reason: z.string().min(1),
    /** The layer question and version asked, when the layer is judged. */
    question: z.string().optional(),
    windows: z.array(windowRead).optional(),
    /** L4: `retrieval` (never fetched before the send) or `attention` (present, ignored). */
    gap_kind: z.enum(['retrieval', 'attention']).optional(),
    /**
     * L3: the earliest failed tool output (`<traceId>/<spanId>`); what follows it is suspect.
     * `unknown` when an earlier candidate was not read or not decided: the problem may have begun there.
     */
    first_problem_origin: z.string().optional(),
    /** Why `first_problem_origin` is `unknown`: `earlier-candidate-not-read@<span>`, `earlier-candidate-undecided@<span>:<reason>`. */
    first_problem_origin_reason: z.string().optional(),
  })
  .strict();

/** The emission self-manifest: what was gathered, and each missing emission with its reason. */
export const EmissionsSchema = z
  .object({
    emitted: z.array(z.string()),
    missing: z.array(z.object({ key: z.string().min(1), reason: z.string().min(1) }).strict()),
  })
  .strict();

/** Readings that ride along with a finding without being part of its identity. */
export const CovariatesSchema = z
  .object({
    host_load: z.number().nullable().optional(),
    /** When the source spans say the observed thing happened (same as the finding's `observed_at`). */
    observed_at: isoNano.optional(),
    /** The root span's start, when seen. */
    started_at: isoNano.nullable().optional(),
    /** Whether the trajectory was a complete capture when this finding was made. */
    capture_complete: z.boolean().optional(),
    incomplete_reasons: z.array(z.string()).optional(),
  })
  .strict();

/**
 * A finding, schema 1.1.0. `treatment` and `conditions` are required and nullable: `null` =
 * provenance unavailable, `[]` = looked and found none. `finding_id` covers the identity
 * fields only (see identity.ts); everything else is evidence or covariate.
 */
export const FindingSchema = z
  .object({
    schema_version: z.literal(FINDING_SCHEMA_VERSION),
    finding_id: z.string().regex(/^f1_[0-9a-f]{64}$/),
    analyst_id: z.string().min(1),
    area: z.string().min(1),
    subject: SubjectSchema,
    claim: z.string().min(1),
    /**
     * What makes two equal claims about one trajectory two facts (an L0 anchor span, a
     * repetition's argument digest); part of identity, so `finding_id` can be recomputed from
     * the record alone. Internal: a judged finding's basis names the window-policy digest.
     */
    id_basis: internalField(z.array(z.string()).optional(), 'the identity basis (a judged finding names its window-policy digest)'),
    severity: z.enum(SEVERITIES),
    layer: z.enum(FINDING_LAYERS),
    method: MethodSchema,
    /** `fired` for an L0 candidate, `observed` for a computed observation such as repetition. */
    verdict: z.enum(['fired', 'observed']).optional(),
    evidence_refs: z.array(EvidenceRefSchema),
    code_eval_hits: z.array(CodeEvalHitSchema).optional(),
    observation: ObservationSchema.optional(),
    /** Present only on a replayed judged finding; not part of identity. */
    replay: ReplaySchema.optional(),
    /** The layered walk's summary finding: one verdict per layer, skipped ones marked. */
    layer_verdicts: z.array(LayerVerdictSchema).optional(),
    /** How deep the walk went, in order. */
    layers_engaged: z.array(z.enum(WALK_LAYERS)).optional(),
    /** `L1` when the walk stopped after L1 by its stopping rule; null when it did not stop early. */
    early_exit: z.literal('L1').nullable().optional(),
    emissions: EmissionsSchema.optional(),
    treatment: z.array(BundleSchema).nullable(),
    conditions: z.array(SnapshotSchema).nullable(),
    observed_at: isoNano,
    covariates: CovariatesSchema,
  })
  .strict();

export type Finding = z.infer<typeof FindingSchema>;
export type Severity = (typeof SEVERITIES)[number];
export type FindingLayer = (typeof FINDING_LAYERS)[number];
export type Observation = z.infer<typeof ObservationSchema>;
export type Covariates = z.infer<typeof CovariatesSchema>;
export type WalkLayer = (typeof WALK_LAYERS)[number];
export type LayerVerdict = z.infer<typeof LayerVerdictSchema>;
export type Emissions = z.infer<typeof EmissionsSchema>;
