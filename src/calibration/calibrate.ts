import { z } from 'zod';
import { canonicalDigest } from '../core/digest.ts';
import { cohensKappa } from './kappa.ts';
import { kappaInterval, labelsNeeded, type KappaInterval, type LabelsNeeded } from './kappa-interval.ts';
import type { LedgerRecord, ResultRecord } from '../judge/ledger/record.ts';
import { goldQuestionId, isRecordOnly, REPORTED_QUESTIONS, reportedQuestionById } from '../judge/question-catalog.ts';
import type { WindowKind } from '../windows/window.ts';

/**
 * An independent human label for one question on one window. `unsure`/null are exclusions.
 * Rows written by `trajwatch label` (label-record.ts) also carry who labelled, when, the
 * support event they chose and the digest of the window as they saw it; calibration reads
 * the first four fields only.
 */
export const GoldRowSchema = z.strictObject({
  questionId: z.string().min(1),
  windowId: z.string().min(1),
  label: z.enum(['yes', 'no', 'unsure', 'unavailable']).nullable(),
  source: z.string().min(1),
  format: z.literal('trajwatch.label/1').optional(),
  labeler: z.string().min(1).optional(),
  labeledAt: z.string().min(1).optional(),
  support: z.string().min(1).nullable().optional(),
  windowDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  /** A correction: the `labeledAt` of this labeler's earlier row for the (question, window), which this row replaces. */
  supersedes: z.string().min(1).optional(),
});
export type GoldRow = z.infer<typeof GoldRowSchema>;

/**
 * The gold rows in force: the file stays append-only, so a corrected label is a later row with
 * `supersedes`, and it replaces every earlier row of the same labeler (`labeler`, else
 * `source`) for that (question, window) — the latest line wins. Rows without `supersedes` are
 * kept as they are (two differing ones are conflicting gold). File order is kept. Pure.
 */
export function goldInForce(gold: readonly GoldRow[]): GoldRow[] {
  const k = (g: GoldRow) => `${g.labeler ?? g.source}\u0000${g.questionId}\u0000${g.windowId}`;
  const latestCorrection = new Map<string, number>();
  gold.forEach((g, i) => g.supersedes !== undefined && latestCorrection.set(k(g), i));
  return gold.filter((g, i) => {
    const last = latestCorrection.get(k(g));
    return last === undefined || i >= last;
  });
}

/**
 * What a certificate would bind besides the question: one model, through one evaluator and
 * request contract, on one layer (window kind) under one window policy. Null: not recorded
 * (results written before the binding existed); no certificate can be issued for it.
 */
export interface CalibrationTarget {
  questionId: string;
  questionVersion: string;
  windowPolicyDigest: string;
  windowKind: WindowKind | null;
  requestContractDigest: string | null;
  evaluatorDigest: string | null;
  requestedModel: string;
  servedModel: string | null;
}

/** What the predictions say `missing` when a gold window has no recorded answer. */
export const MISSING = '(missing)';

export interface Disagreement {
  windowId: string;
  gold: string;
  /** The recorded answer; `(missing)` when none; `(no answer)` when the call failed. */
  predicted: string;
  source: string;
  /** The selected support event id (or `unresolved`) and the window's event map, when recorded. */
  support: string | null;
  eventMap: { id: string; uris: string[] }[] | null;
}

export interface QuestionReport {
  target: CalibrationTarget;
  /** A record-only question (L4's gap kind): scored and reported, never certified. */
  recordOnly: boolean;
  /** Pairs scored: gold rows with a usable label, missing predictions included. */
  n: number;
  sourceCounts: Record<string, number>;
  /** Gold rows labelled `unsure` or null: excluded, never read as "no". */
  excludedGold: number;
  /** Recorded answers without a gold row. */
  missingLabels: number;
  /** Gold rows without a recorded answer: each is a disagreement. */
  missingPredictions: number;
  /** Scored pairs whose recorded answer is `unsure` or no answer at all. */
  abstentions: number;
  /** confusion[gold][predicted] = count. */
  confusion: Record<string, Record<string, number>>;
  agreement: number | null;
  kappa: number | null;
  /** The 95 % interval for kappa (`kappa-interval.ts`); null when kappa is. A certificate needs `lower` ≥ the minimum. */
  kappaInterval: KappaInterval | null;
  /**
   * An estimate of the labelled pairs in all the lower bound would need at the observed kappa and
   * label shares (`unreachable`: the observed kappa is not above the minimum); null when kappa is.
   */
  labelsNeeded: LabelsNeeded | null;
  qualifies: boolean;
  /** Why not, when it does not qualify. */
  reasons: string[];
  disagreements: Disagreement[];
}

export interface CalibrationReport {
  minKappa: number;
  questions: QuestionReport[];
  /** Gold rows naming a question trajwatch does not ask. */
  unknownQuestionRows: number;
  /** Gold rows that repeat a (question, window) with a different label: refused, listed here. */
  conflictingGold: { questionId: string; windowId: string }[];
}

interface Prediction {
  windowId: string;
  option: string | null;
  support: string | null;
  eventMap: { id: string; uris: string[] }[] | null;
}

/**
 * Join gold rows with the answers recorded in a ledger, per question and per target (question
 * version, window policy, window kind, request contract, evaluator, requested and served
 * model). Every question is scored — trace, layer, verifier and record-only — the verifier's
 * against the gold of the layer question it asks again (`goldQuestionId`). Pure.
 */
export function calibrate(gold: readonly GoldRow[], records: readonly LedgerRecord[], minKappa: number): CalibrationReport {
  const eventMaps = new Map<string, { id: string; uris: string[] }[]>();
  const kinds = new Map<string, WindowKind>();
  for (const r of records) {
    if (r.type !== 'intent') continue;
    eventMaps.set(r.window.windowId, r.window.eventMap);
    kinds.set(r.window.windowId, r.window.kind);
  }
  // target key → predictions by window id
  const targets = new Map<string, { target: CalibrationTarget; byWindow: Map<string, Prediction> }>();
  for (const r of records) {
    if (r.type !== 'result') continue;
    for (const a of r.answers)
      addPrediction(targets, r, kinds.get(r.key.invocationId) ?? null, a.questionId, a.questionVersion, {
        windowId: r.key.invocationId,
        option: a.option,
        support: a.support,
        eventMap: eventMaps.get(r.key.invocationId) ?? null,
      });
  }
  const goldByQuestion = new Map<string, Map<string, GoldRow>>();
  const conflictingGold: CalibrationReport['conflictingGold'] = [];
  let unknownQuestionRows = 0;
  for (const g of goldInForce(gold)) {
    if (reportedQuestionById(g.questionId) === undefined) {
      unknownQuestionRows++;
      continue;
    }
    const gq = goldQuestionId(g.questionId);
    const rows = goldByQuestion.get(gq) ?? new Map<string, GoldRow>();
    goldByQuestion.set(gq, rows);
    const prior = rows.get(g.windowId);
    if (prior !== undefined && prior.label !== g.label) conflictingGold.push({ questionId: gq, windowId: g.windowId });
    else rows.set(g.windowId, g);
  }
  const conflicted = new Set(conflictingGold.map((c) => `${c.questionId}\u0000${c.windowId}`));
  const questions: QuestionReport[] = [];
  for (const q of REPORTED_QUESTIONS) {
    const gq = goldQuestionId(q.id);
    const rows = [...(goldByQuestion.get(gq)?.values() ?? [])].filter((g) => !conflicted.has(`${gq}\u0000${g.windowId}`));
    const own = [...targets.values()].filter((t) => t.target.questionId === q.id);
    if (own.length === 0 && rows.length > 0) {
      own.push({
        target: {
          questionId: q.id,
          questionVersion: q.version,
          windowPolicyDigest: '',
          windowKind: null,
          requestContractDigest: null,
          evaluatorDigest: null,
          requestedModel: '',
          servedModel: null,
        },
        byWindow: new Map(),
      });
    }
    // A gold window answered under one target is scored there only; a window answered under
    // none is a missing prediction of every target of its question.
    const answered = new Set(own.flatMap((t) => [...t.byWindow.keys()]));
    for (const t of own)
      questions.push(
        score(
          t.target,
          t.byWindow,
          rows.filter((g) => t.byWindow.has(g.windowId) || !answered.has(g.windowId)),
          minKappa,
        ),
      );
  }
  return { minKappa, questions, unknownQuestionRows, conflictingGold };
}

function belowBound(i: KappaInterval, minKappa: number, n: number, need: LabelsNeeded | null): string {
  const more =
    need?.kind === 'estimate'
      ? `roughly ${need.total - n} more labels (${need.total} in all) would be needed if kappa and the label shares held (an estimate)`
      : 'no realistic number of labels at this agreement would reach it';
  return `lower bound ${i.lower.toFixed(3)} of the 95 % interval [${i.lower.toFixed(3)}, ${i.upper.toFixed(3)}] is below ${minKappa} (n ${n}): ${more}`;
}

/** The calibration target an answer of a result belongs to (what a certificate would bind). */
export function targetOf(r: ResultRecord, windowKind: WindowKind | null, questionId: string, questionVersion: string): CalibrationTarget {
  return {
    questionId,
    questionVersion,
    windowPolicyDigest: r.windowPolicyDigest,
    windowKind: r.windowKind ?? windowKind,
    requestContractDigest: r.requestContractDigest ?? null,
    evaluatorDigest: r.evaluatorDigest ?? null,
    requestedModel: r.requestedModel,
    servedModel: r.servedModel,
  };
}

function addPrediction(
  targets: Map<string, { target: CalibrationTarget; byWindow: Map<string, Prediction> }>,
  r: ResultRecord,
  windowKind: WindowKind | null,
  questionId: string,
  questionVersion: string,
  p: Prediction,
): void {
  const target = targetOf(r, windowKind, questionId, questionVersion);
  const k = canonicalDigest(target);
  const entry = targets.get(k) ?? { target, byWindow: new Map<string, Prediction>() };
  targets.set(k, entry);
  entry.byWindow.set(p.windowId, p);
}

function score(target: CalibrationTarget, byWindow: Map<string, Prediction>, rows: readonly GoldRow[], minKappa: number): QuestionReport {
  const report: QuestionReport = {
    target,
    recordOnly: isRecordOnly(target.questionId),
    n: 0,
    sourceCounts: {},
    excludedGold: 0,
    missingLabels: 0,
    missingPredictions: 0,
    abstentions: 0,
    confusion: {},
    agreement: null,
    kappa: null,
    kappaInterval: null,
    labelsNeeded: null,
    qualifies: false,
    reasons: [],
    disagreements: [],
  };
  const pairs: [string, string][] = [];
  const labelled = new Set<string>();
  for (const g of rows) {
    labelled.add(g.windowId);
    if (g.label === null || g.label === 'unsure') {
      report.excludedGold++;
      continue;
    }
    report.sourceCounts[g.source] = (report.sourceCounts[g.source] ?? 0) + 1;
    const p = byWindow.get(g.windowId);
    const predicted = p === undefined ? MISSING : (p.option ?? '(no answer)');
    if (p === undefined) report.missingPredictions++;
    else if (p.option === null || p.option === 'unsure') report.abstentions++;
    pairs.push([g.label, predicted]);
    const row = (report.confusion[g.label] ??= {});
    row[predicted] = (row[predicted] ?? 0) + 1;
    if (predicted !== g.label) {
      report.disagreements.push({
        windowId: g.windowId,
        gold: g.label,
        predicted,
        source: g.source,
        support: p?.support ?? null,
        eventMap: p?.eventMap ?? null,
      });
    }
  }
  for (const w of byWindow.keys()) if (!labelled.has(w)) report.missingLabels++;
  report.n = pairs.length;
  report.agreement = pairs.length === 0 ? null : pairs.filter(([g, p]) => g === p).length / pairs.length;
  report.kappa = cohensKappa(pairs);
  report.kappaInterval = kappaInterval(pairs);
  report.labelsNeeded = labelsNeeded(pairs, minKappa);
  if (report.recordOnly) report.reasons.push('record-only question (a companion classification that never routes): never certified');
  if (report.n === 0) report.reasons.push('no gold pairs');
  if (report.kappa === null && report.n > 0) report.reasons.push('kappa undefined (one-class gold or degenerate sample)');
  if (report.kappa !== null && report.kappa < minKappa) report.reasons.push(`kappa ${report.kappa.toFixed(3)} below ${minKappa}`);
  else if (report.kappaInterval !== null && report.kappaInterval.lower < minKappa)
    report.reasons.push(belowBound(report.kappaInterval, minKappa, report.n, report.labelsNeeded));
  if (report.missingPredictions > 0) report.reasons.push(`${report.missingPredictions} gold windows have no recorded answer`);
  if (target.servedModel === null) report.reasons.push('served model unknown');
  if (target.windowKind === null || target.requestContractDigest === null || target.evaluatorDigest === null) {
    report.reasons.push('answers recorded without the layer, request contract or evaluator binding (before trajwatch bound them): judge anew to calibrate');
  }
  const q = reportedQuestionById(target.questionId);
  if (q === undefined || q.version !== target.questionVersion) report.reasons.push('answers recorded under another question version');
  report.qualifies = report.reasons.length === 0;
  return report;
}
