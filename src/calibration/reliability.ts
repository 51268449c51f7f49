import { canonicalDigest } from '../core/digest.ts';
import type { WindowKind } from '../windows/window.ts';
import { goldInForce, targetOf, type CalibrationTarget, type GoldRow } from './calibrate.ts';
import type { LedgerRecord } from '../judge/ledger/record.ts';
import { goldQuestionId, isRecordOnly, reportedQuestionById, reportOrder } from '../judge/question-catalog.ts';
import { supportQuestionId } from '../judge/questions.ts';

/** Said with every reliability report, in every form. */
export const KAPPA_CAVEAT =
  "Cohen's kappa (trajwatch calibrate) measures agreement of the judge's answers with the labels; it is not evidence that the judge's probabilities are reliable. The curves below measure that, per question, and need their own labeled sample: a calibrated question can have unreliable probabilities, and the other way round.";

/** The probability thresholds the accuracy table is read at. */
export const THRESHOLDS = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99] as const;
/** Curve bins: ten equal bins of the chosen option's probability. */
export const BINS = 10;

/** A reliability group: a calibration target without the served model (a failed call has none, and stays in its group's denominator). */
export type ReliabilityTarget = Omit<CalibrationTarget, 'servedModel'>;

export interface CurveBin {
  /** Bin bounds of the chosen option's probability: [lo, hi), the last bin closed. */
  lo: number;
  hi: number;
  n: number;
  meanProbability: number;
  /** Share of the bin's answers the label agrees with. */
  accuracy: number;
}

export interface ThresholdRow {
  threshold: number;
  /** Labeled answers whose chosen option's probability is at least the threshold. */
  above: number;
  correct: number;
  /** correct / above; null when none is above. */
  accuracy: number | null;
  /** above / labeled: every labeled decision in the denominator, failed calls and answers without probabilities included. */
  coverage: number | null;
}

export interface QuestionReliability {
  target: ReliabilityTarget;
  /** A record-only question (L4's gap kind): its curve is drawn, it never routes or holds a certificate. */
  recordOnly: boolean;
  servedModels: string[];
  /** Decisions (judged windows) recorded for this target. */
  decisions: number;
  /** Decisions with a usable label (not unsure/null, not conflicting). */
  labeled: number;
  /** Labeled decisions whose call failed or gave no valid answer: in every denominator, never correct. */
  failed: number;
  /** Labeled answers without probabilities (a server without logprobs): in the denominators, not on the curve. */
  withoutProbabilities: number;
  /** Labels excluded: unsure or null. */
  excluded: number;
  /** Agreement over every labeled decision (failed calls count as wrong); null when none is labeled. */
  accuracy: number | null;
  /** The empirical curve; null below two labeled answers with probabilities. */
  curve: CurveBin[] | null;
  thresholds: ThresholdRow[];
}

export interface RecordOnlyReliability {
  /** `<question>.support`: record-only, no route, no certificate; never on a curve. */
  questionId: string;
  decisions: number;
  /** Decisions where a labeler chose a supporting event and the judge answered one. */
  labeled: number;
  /** Share of those where the judge chose the labeler's event; null when none. */
  agreement: number | null;
}

export interface ReliabilityReport {
  caveat: string;
  /** Results in the ledger (judged windows), failed calls included. */
  decisions: number;
  failedCalls: number;
  /** Decisions with at least one usable label on a routing question. */
  labeledDecisions: number;
  missingOutcomes: number;
  /** (question, window) pairs whose labelers disagree: excluded, as in calibrate. */
  conflictingGold: number;
  questions: QuestionReliability[];
  recordOnlyQuestions: RecordOnlyReliability[];
}

/**
 * The seed's `reliability()`: outcome labels (gold rows; `GoldStore.observe` records them)
 * joined to the decisions in the ledger. Pure. Every question — trace, layer, verifier (scored
 * against the gold of the question it asks again), record-only — per target: sample counts, the
 * empirical curve of the chosen option's probability against agreement with the label (null
 * below two labels), and threshold accuracy. Failed calls stay in the denominator. The support
 * choices are record-only: listed apart, never on a curve. Threshold tables are evidence for
 * an explicit policy revision, never tuning by themselves.
 */
export function reliability(records: readonly LedgerRecord[], gold: readonly GoldRow[]): ReliabilityReport {
  const kinds = new Map<string, WindowKind>();
  for (const r of records) if (r.type === 'intent') kinds.set(r.window.windowId, r.window.kind);
  const labels = new Map<string, { label: string | null; support: string | null } | 'conflict'>();
  const lk = (q: string, w: string) => `${q}\u0000${w}`;
  for (const g of goldInForce(gold)) {
    if (reportedQuestionById(g.questionId) === undefined) continue;
    // A verifier's answers are scored against the gold of the question it asks again.
    const k = lk(goldQuestionId(g.questionId), g.windowId);
    const prior = labels.get(k);
    const mine = { label: g.label, support: g.support ?? null };
    if (prior === undefined) labels.set(k, mine);
    else if (prior !== 'conflict' && prior.label !== mine.label) labels.set(k, 'conflict');
  }
  const groups = new Map<string, { q: QuestionReliability; pairs: { p: number | null; correct: boolean }[] }>();
  const support = new Map<string, RecordOnlyReliability & { agree: number }>();
  let decisions = 0;
  let failedCalls = 0;
  const labeledDecisions = new Set<string>();
  for (const r of records) {
    if (r.type !== 'result') continue;
    decisions++;
    if (r.failure !== null) failedCalls++;
    const windowId = r.key.invocationId;
    for (const a of r.answers) {
      const { servedModel: _served, ...target } = targetOf(r, kinds.get(windowId) ?? null, a.questionId, a.questionVersion);
      const key = canonicalDigest(target);
      const g = groups.get(key) ?? { q: emptyQuestion(target), pairs: [] };
      groups.set(key, g);
      g.q.decisions++;
      if (r.servedModel !== null && !g.q.servedModels.includes(r.servedModel)) g.q.servedModels.push(r.servedModel);
      const s = support.get(a.questionId) ?? { questionId: supportQuestionId(a.questionId), decisions: 0, labeled: 0, agreement: null, agree: 0 };
      support.set(a.questionId, s);
      s.decisions++;
      const l = labels.get(lk(goldQuestionId(a.questionId), windowId));
      if (l === undefined || l === 'conflict') continue;
      if (l.label === null || l.label === 'unsure') {
        g.q.excluded++;
        continue;
      }
      labeledDecisions.add(windowId);
      g.q.labeled++;
      if (a.option === null) {
        g.q.failed++;
        g.pairs.push({ p: null, correct: false });
      } else {
        const p = a.probabilities?.[a.option];
        if (p === undefined) g.q.withoutProbabilities++;
        g.pairs.push({ p: p ?? null, correct: a.option === l.label });
      }
      if (l.support !== null && a.support !== null) {
        s.labeled++;
        if (l.support === a.support) s.agree++;
      }
    }
  }
  const questions = [...groups.values()].map(({ q, pairs }) => finish(q, pairs));
  questions.sort((a, b) => order(a.target.questionId) - order(b.target.questionId) || (canonicalDigest(a.target) < canonicalDigest(b.target) ? -1 : 1));
  const recordOnlyQuestions = [...support.values()]
    .map(({ agree, ...s }) => ({ ...s, agreement: s.labeled === 0 ? null : agree / s.labeled }))
    .sort((a, b) => order(a.questionId.replace(/\.support$/, '')) - order(b.questionId.replace(/\.support$/, '')));
  return {
    caveat: KAPPA_CAVEAT,
    decisions,
    failedCalls,
    labeledDecisions: labeledDecisions.size,
    missingOutcomes: decisions - labeledDecisions.size,
    conflictingGold: [...labels.values()].filter((l) => l === 'conflict').length,
    questions,
    recordOnlyQuestions,
  };
}

const order = reportOrder;

function emptyQuestion(target: ReliabilityTarget): QuestionReliability {
  return {
    target,
    recordOnly: isRecordOnly(target.questionId),
    servedModels: [],
    decisions: 0,
    labeled: 0,
    failed: 0,
    withoutProbabilities: 0,
    excluded: 0,
    accuracy: null,
    curve: null,
    thresholds: [],
  };
}

function finish(q: QuestionReliability, pairs: { p: number | null; correct: boolean }[]): QuestionReliability {
  q.accuracy = pairs.length === 0 ? null : pairs.filter((x) => x.correct).length / pairs.length;
  const scored = pairs.filter((x): x is { p: number; correct: boolean } => x.p !== null);
  if (scored.length >= 2) {
    const bins: CurveBin[] = [];
    for (let i = 0; i < BINS; i++) {
      const lo = i / BINS;
      const hi = (i + 1) / BINS;
      const inBin = scored.filter((x) => x.p >= lo && (x.p < hi || (i === BINS - 1 && x.p <= hi)));
      if (inBin.length === 0) continue;
      bins.push({
        lo,
        hi,
        n: inBin.length,
        meanProbability: inBin.reduce((s, x) => s + x.p, 0) / inBin.length,
        accuracy: inBin.filter((x) => x.correct).length / inBin.length,
      });
    }
    q.curve = bins;
  }
  q.thresholds = THRESHOLDS.map((threshold) => {
    const above = scored.filter((x) => x.p >= threshold);
    const correct = above.filter((x) => x.correct).length;
    return {
      threshold,
      above: above.length,
      correct,
      accuracy: above.length === 0 ? null : correct / above.length,
      coverage: pairs.length === 0 ? null : above.length / pairs.length,
    };
  });
  return q;
}
