import { z } from 'zod';
import { L0_PATTERNS } from '../checks/check-result.ts';
import { WINDOW_KINDS, WINDOW_TRIGGERS } from '../windows/window.ts';
import { ISO_NANO_PATTERN } from '../core/time.ts';
import { unavailableReasonDescription } from './capture-states.ts';
import { CAPTURE_NOTE_REASONS } from './capture-notes.ts';

export const MANIFEST_SCHEMA_VERSION = '1.0.0';
/** The `record_kind` that tells a manifest from a finding on the findings log and topic. */
export const MANIFEST_RECORD_KIND = 'analysis-manifest';
/** Every check a manifest accounts for: the L0 patterns, then exact tool repetition. */
export const MANIFEST_CHECKS = [...L0_PATTERNS, 'tool-repetition'] as const;
/**
 * What became of a check on one trajectory revision. `fired` (an L0 candidate) and `observed`
 * (a computed observation) name the findings made; `none-observed` is a claim of absence and
 * comes from a complete capture only; `unavailable` says why the check could claim nothing.
 */
export const CHECK_STATUSES = ['fired', 'observed', 'none-observed', 'unavailable'] as const;
/** What became of a window the policy could ask for. */
export const WINDOW_FATES = ['judged', 'refused', 'deferred', 'not-sampled'] as const;

const findingId = z.string().regex(/^f1_[0-9a-f]{64}$/);

/**
 * Bounds that keep one manifest a record any sink takes (Kafka refuses records over
 * `maxRecordBytes`) whatever the trajectory's size. Nothing beyond them is dropped unsaid:
 * `finding_count` counts every finding, `windows_omitted` counts every window not listed.
 */
export const MANIFEST_MAX_FINDING_IDS = 256;
export const MANIFEST_MAX_UNJUDGED_WINDOWS = 256;

export const CheckStatusSchema = z
  .object({
    check: z.enum(MANIFEST_CHECKS),
    status: z.enum(CHECK_STATUSES),
    /** How many findings it made (`fired`, `observed`); 0 otherwise. */
    finding_count: z.number().int().min(0),
    /** Their ids, sorted; the first `MANIFEST_MAX_FINDING_IDS` when there are more. */
    finding_ids: z.array(findingId).max(MANIFEST_MAX_FINDING_IDS),
    /** Why it is `unavailable` (`incomplete-capture`, a capture gap kind, ...); absent for the other statuses. */
    reason: z.string().min(1).optional().describe(unavailableReasonDescription()),
    detail: z.string().optional(),
    /** Attempts left out of the repetition count, with why (e.g. two payloads under one span id). */
    excluded: z.array(z.object({ trace_id: z.string(), span_id: z.string(), reason: z.string() }).strict()).optional(),
  })
  .strict();

export const WindowFateSchema = z
  .object({
    /** The window's id (`w1_...`), the same whether it was judged, refused or never built. */
    window_id: z.string().regex(/^w1_[0-9a-f]{24}$/),
    kind: z.enum(WINDOW_KINDS),
    /** `<traceId>/<spanId>` of the step the window is built around. */
    anchor: z.string().min(1),
    /** What asked for it; for `not-sampled`, what would have. */
    triggers: z.array(z.enum(WINDOW_TRIGGERS)).min(1),
    fate: z.enum(WINDOW_FATES),
    /** Why it was refused, deferred or not sampled (`events-per-window`, `shutdown`, `trigger-off`, `rate`...); on `judged`, what answered when no model did (`replay`, `intent-without-result`...). */
    reason: z.string().min(1).optional(),
    detail: z.string().optional(),
    /** The judged findings it produced (`judged`); empty otherwise. */
    finding_ids: z.array(findingId),
  })
  .strict();

/**
 * What was analyzed of one closed trajectory revision and what came of every check and window:
 * the emission self-manifest. A consumer reads from it that a trajectory was checked and
 * found clean, and tells that apart from checks that could not run, windows refused, deferred
 * or not sampled, and provenance that was refused. Emitted once the revision's judged part is
 * settled, after the findings it names.
 */
export const AnalysisManifestSchema = z
  .object({
    record_kind: z.literal(MANIFEST_RECORD_KIND),
    schema_version: z.literal(MANIFEST_SCHEMA_VERSION),
    /** `m1_` + sha256 of the manifest's content: the same analysis of a revision, the same id. */
    manifest_id: z.string().regex(/^m1_[0-9a-f]{64}$/),
    subject: z
      .object({
        trajectory_key: z.string().min(1),
        trace_ids: z.array(z.string().regex(/^[0-9a-f]{32}$/)).min(1),
        revision: z.number().int().min(1),
      })
      .strict(),
    capture: z
      .object({
        complete: z.boolean(),
        incomplete_reasons: z.array(z.string()),
        closed_by: z.string(),
        steps: z.number().int().min(0),
        refused_spans: z.number().int().min(0),
        /** Capture artefacts read past (`captureNotes`), by reason; absent when there is none. */
        notes: z
          .array(z.object({ reason: z.enum(CAPTURE_NOTE_REASONS), count: z.number().int().min(1), detail: z.string().min(1) }).strict())
          .min(1)
          .optional(),
      })
      .strict(),
    /** One entry per check of `MANIFEST_CHECKS`, in that order. */
    checks: z.array(CheckStatusSchema),
    /**
     * The findings' treatment and conditions: `derived` with what came out null and the issues
     * that made it so, or `not-derived` when no finding needed it.
     */
    provenance: z.discriminatedUnion('status', [
      z
        .object({
          status: z.literal('derived'),
          treatment: z.enum(['available', 'unavailable']),
          conditions: z.enum(['available', 'unavailable']),
          issues: z.array(z.object({ reason: z.string(), detail: z.string() }).strict()),
        })
        .strict(),
      z.object({ status: z.literal('not-derived'), reason: z.string().min(1) }).strict(),
    ]),
    /** Whether the judge ran: with it `disabled`, no window was asked for. */
    judge: z.enum(['enabled', 'disabled']),
    /**
     * Every window the policy could ask for on this revision, with its fate, in the policy's
     * order: every judged window, and the first `MANIFEST_MAX_UNJUDGED_WINDOWS` of the others.
     */
    windows: z.array(WindowFateSchema),
    /** The windows not listed in `windows` (beyond the bound), counted by fate and reason. */
    windows_omitted: z.array(z.object({ fate: z.enum(WINDOW_FATES), reason: z.string(), count: z.number().int().min(1) }).strict()),
    /** The trajectory's last span end: from the spans, never the clock. */
    observed_at: z.string().regex(ISO_NANO_PATTERN, 'ISO-8601 UTC with nine fractional digits'),
  })
  .strict();

export type AnalysisManifest = z.infer<typeof AnalysisManifestSchema>;
export type CheckStatus = z.infer<typeof CheckStatusSchema>;
export type WindowFate = z.infer<typeof WindowFateSchema>;
