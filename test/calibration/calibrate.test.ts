import { describe, expect, it } from 'vitest';
import { calibrate, goldInForce, type GoldRow } from '../../src/calibration/calibrate.ts';
import { certificateFor } from '../../src/calibration/certify.ts';
import { CertificateSchema, KAPPA_INTERVAL_METHOD } from '../../src/judge/certificate.ts';
import type { LedgerRecord, ResultRecord } from '../../src/judge/ledger/record.ts';
import { L1_OUTCOME, L4_CONTEXT, L4_GAP_KIND, verifierQuestion } from '../../src/judge/walk/layer-questions.ts';
import { SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { layerResult } from '../judge/walk/layer-records.ts';

const H = (c: string) => c.repeat(64);
const Q0 = SEMANTIC_QUESTIONS[0]!.id;

/** A result record whose first question answered `option` (others "no"). */
function result(
  windowId: string,
  option: ResultRecord['answers'][number]['option'],
  servedModel: string | null = 'served-1',
  over: Partial<ResultRecord> = {},
): ResultRecord {
  return {
    v: 1,
    type: 'result',
    key: { point: 'trace-questions@1', runId: 'run', invocationId: windowId },
    inputDigest: H('a'),
    owner: 'o',
    requestedModel: 'judge',
    servedModel,
    windowPolicyDigest: H('b'),
    windowKind: 'event',
    requestContractDigest: H('c'),
    evaluatorDigest: H('e'),
    failure: null,
    answers: SEMANTIC_QUESTIONS.map((q, i) => ({
      questionId: q.id,
      questionVersion: q.version,
      option: i === 0 ? option : 'no',
      probabilities: null,
      unseenBound: null,
      support: i === 0 ? 'e1' : 'unresolved',
      recommendation: { action: 'record', route: null, reason: 'policy' },
      certificateId: null,
    })),
    recommendation: { action: 'record', route: null, reason: 'policy' },
    receipt: { promptTokens: null, completionTokens: null, totalTokens: null, cost: null, currency: null, attempts: 1 },
    recordedAt: 'x',
    ...over,
  };
}
const gold = (windowId: string, label: GoldRow['label'], source = 'reviewer-a'): GoldRow => ({ questionId: Q0, windowId, label, source });

describe('calibrate', () => {
  it('reports n, sources, exclusions, missing labels and predictions, abstentions, confusion, kappa and every disagreement', () => {
    const records: LedgerRecord[] = [
      result('w1', 'yes'),
      result('w2', 'no'),
      result('w3', 'yes'),
      result('w4', 'no'),
      result('w5', 'unsure'),
      result('w9', 'no'),
    ];
    const rows = [
      gold('w1', 'yes'),
      gold('w2', 'no'),
      gold('w3', 'no', 'reviewer-b'),
      gold('w4', 'no'),
      gold('w5', 'yes'),
      gold('w6', 'yes'),
      gold('w7', 'unsure'),
      gold('w8', null),
    ];
    const report = calibrate(rows, records, 0.6);
    const q = report.questions.find((x) => x.target.questionId === Q0)!;
    expect(q.n).toBe(6);
    expect(q.sourceCounts).toEqual({ 'reviewer-a': 5, 'reviewer-b': 1 });
    expect(q.excludedGold).toBe(2);
    expect(q.missingLabels).toBe(1); // w9
    expect(q.missingPredictions).toBe(1); // w6
    expect(q.abstentions).toBe(1); // w5 answered unsure
    expect(q.confusion).toEqual({ yes: { yes: 1, unsure: 1, '(missing)': 1 }, no: { no: 2, yes: 1 } });
    expect(q.agreement).toBeCloseTo(3 / 6, 12);
    // gold yes 3, no 3; predicted yes 2, no 2, unsure 1, missing 1: pe = .5·(2/6) + .5·(2/6) = 1/3; κ = (1/2 − 1/3)/(2/3) = 0.25
    expect(q.kappa).toBeCloseTo(0.25, 12);
    expect(q.disagreements.map((d) => [d.windowId, d.gold, d.predicted])).toEqual([
      ['w3', 'no', 'yes'],
      ['w5', 'yes', 'unsure'],
      ['w6', 'yes', '(missing)'],
    ]);
    expect(q.qualifies).toBe(false);
  });

  it('qualifies a question with enough agreement and writes a valid certificate for it only', () => {
    // 20 agreeing labels, balanced: the interval's lower bound (Wilson, 20/20) is 0.678, above 0.6.
    const windows = [...Array(20).keys()].map((i) => `w${i}`);
    const records = windows.map((w, i) => result(w, i < 10 ? 'yes' : 'no'));
    const rows = windows.map((w, i) => gold(w, i < 10 ? 'yes' : 'no'));
    const report = calibrate(rows, records, 0.6);
    const q = report.questions.find((x) => x.target.questionId === Q0)!;
    expect(q).toMatchObject({ n: 20, kappa: 1, qualifies: true });
    expect(q.kappaInterval!.lower).toBeCloseTo(0.678, 3);
    // Other questions have no gold: they do not qualify.
    expect(report.questions.filter((x) => x.qualifies)).toHaveLength(1);
    const cert = certificateFor(q, 0.6, [{ kind: 'artifact', uri: 'file:/gold.jsonl' }], '2026-01-01T00:00:00Z');
    expect(CertificateSchema.safeParse(cert).success).toBe(true);
    expect(cert).toMatchObject({ questionId: Q0, goldN: 20, kappa: 1, servedModel: 'served-1', windowPolicyDigest: H('b') });
    expect(cert.kappaInterval).toEqual({ level: 0.95, method: KAPPA_INTERVAL_METHOD, lower: q.kappaInterval!.lower, upper: 1 });
    expect(cert).toMatchObject({ windowKind: 'event', requestContractDigest: H('c'), evaluatorDigest: H('e') });
  });

  it('scores each layer, request contract and evaluator apart, each on its own gold windows', () => {
    const event = ['w1', 'w2', 'w3', 'w4'].map((w, i) => result(w, i < 2 ? 'yes' : 'no'));
    // Turn windows judged through another evaluator, and answered badly.
    const turn = ['t1', 't2', 't3', 't4'].map((w, i) => result(w, i < 2 ? 'no' : 'yes', 'served-1', { windowKind: 'turn', evaluatorDigest: H('f') }));
    const rows = [...['w1', 'w2', 't1', 't2'].map((w) => gold(w, 'yes')), ...['w3', 'w4', 't3', 't4'].map((w) => gold(w, 'no')), gold('m1', 'yes')];
    const q0 = calibrate(rows, [...event, ...turn], 0.6).questions.filter((x) => x.target.questionId === Q0);
    expect(q0.map((q) => [q.target.windowKind, q.target.evaluatorDigest, q.n, q.kappa])).toEqual([
      // m1 was answered under no target: a missing prediction of each.
      ['event', H('e'), 5, expect.any(Number)],
      ['turn', H('f'), 5, expect.any(Number)],
    ]);
    expect(q0.map((q) => q.missingPredictions)).toEqual([1, 1]);
    expect(q0[0]!.disagreements.map((d) => d.windowId)).toEqual(['m1']);
    expect(q0[1]!.disagreements.map((d) => d.windowId)).toEqual(['t1', 't2', 't3', 't4', 'm1']);
  });

  it('issues no certificate from a tiny sample: n 5 at kappa 0.615 is refused on its lower bound, with the interval and an estimate of the labels needed', () => {
    // gold yes 3, no 2; the judge agrees on 4 of 5: po 0.8, pe 0.48, kappa 0.615, above 0.6.
    const labels: [string, GoldRow['label'], 'yes' | 'no'][] = [
      ['w1', 'yes', 'yes'],
      ['w2', 'yes', 'yes'],
      ['w3', 'yes', 'no'],
      ['w4', 'no', 'no'],
      ['w5', 'no', 'no'],
    ];
    const q = calibrate(
      labels.map(([w, g]) => gold(w, g)),
      labels.map(([w, , p]) => result(w, p)),
      0.6,
    ).questions.find((x) => x.target.questionId === Q0)!;
    expect(q.kappa).toBeCloseTo(0.615, 3);
    expect(q.qualifies).toBe(false);
    expect(q.kappaInterval!.lower).toBeLessThan(0);
    expect(q.kappaInterval!.upper).toBe(1);
    expect(q.labelsNeeded).toMatchObject({ kind: 'estimate' });
    const total = (q.labelsNeeded as { total: number }).total;
    expect(total).toBeGreaterThan(100);
    expect(q.reasons.join('; ')).toMatch(
      new RegExp(`lower bound -?0\\.\\d{3} of the 95 % interval \\[-?0\\.\\d{3}, 1\\.000\\] is below 0\\.6.*roughly ${total - 5} more labels`),
    );
  });

  it('says when no number of labels would do: the observed kappa itself below the minimum', () => {
    const q = calibrate(
      [gold('w1', 'yes'), gold('w2', 'no'), gold('w3', 'yes')],
      [result('w1', 'yes'), result('w2', 'yes'), result('w3', 'no')],
      0.6,
    ).questions.find((x) => x.target.questionId === Q0)!;
    expect(q.labelsNeeded).toEqual({ kind: 'unreachable' });
    expect(q.reasons.join('; ')).toMatch(/kappa -?0\.\d{3} below 0\.6/);
  });

  it('issues no certificate from answers recorded before the layer, contract and evaluator were bound', () => {
    const old = ['w1', 'w2', 'w3', 'w4'].map((w, i) => {
      const { windowKind: _k, requestContractDigest: _c, evaluatorDigest: _e, ...r } = result(w, i < 2 ? 'yes' : 'no');
      return r as ResultRecord;
    });
    const q = calibrate([gold('w1', 'yes'), gold('w2', 'yes'), gold('w3', 'no'), gold('w4', 'no')], old, 0.6).questions.find(
      (x) => x.target.questionId === Q0,
    )!;
    expect(q).toMatchObject({ n: 4, kappa: 1, qualifies: false });
    expect(q.reasons.join()).toMatch(/without the layer, request contract or evaluator binding/);
  });

  it('does not qualify one-class gold (kappa null) or an unknown served model', () => {
    const oneClass = calibrate([gold('w1', 'no'), gold('w2', 'no')], [result('w1', 'no'), result('w2', 'no')], 0.6);
    expect(oneClass.questions.find((x) => x.target.questionId === Q0)).toMatchObject({ n: 2, kappa: null, qualifies: false });
    const unknownServed = calibrate([gold('w1', 'yes'), gold('w2', 'no')], [result('w1', 'yes', null), result('w2', 'no', null)], 0.6);
    const q = unknownServed.questions.find((x) => x.target.questionId === Q0)!;
    expect(q.kappa).toBe(1);
    expect(q.qualifies).toBe(false);
    expect(q.reasons).toContain('served model unknown');
  });

  it('reports an empty sample with null kappa, and refuses conflicting gold rows', () => {
    const empty = calibrate([gold('w1', 'unsure')], [result('w1', 'yes')], 0.6);
    expect(empty.questions.find((x) => x.target.questionId === Q0)).toMatchObject({ n: 0, kappa: null, agreement: null, qualifies: false });
    const conflict = calibrate([gold('w1', 'yes'), gold('w1', 'no')], [result('w1', 'yes')], 0.6);
    expect(conflict.conflictingGold).toEqual([{ questionId: Q0, windowId: 'w1' }]);
  });

  it("reads the latest line of a labeler for a (question, window) when it is a correction; other labelers' rows and uncorrected repeats are read as before", () => {
    const first = { ...gold('w1', 'no'), source: 'ann', labeler: 'ann', labeledAt: '2026-01-01T00:00:00.000Z' };
    const fixed = { ...gold('w1', 'yes'), source: 'ann', labeler: 'ann', labeledAt: '2026-01-01T00:01:00.000Z', supersedes: first.labeledAt };
    const r = calibrate([first, fixed], [result('w1', 'yes')], 0.6);
    expect(r.conflictingGold).toEqual([]);
    expect(r.questions.find((x) => x.target.questionId === Q0)).toMatchObject({ n: 1, agreement: 1 });
    expect(goldInForce([first, fixed])).toEqual([fixed]);
    // Ann's correction leaves Bob's label alone: the two now disagree, and the pair is refused.
    const bob = { ...gold('w1', 'no'), source: 'bob', labeler: 'bob' };
    expect(goldInForce([first, bob, fixed])).toEqual([bob, fixed]);
    expect(calibrate([first, bob, fixed], [result('w1', 'yes')], 0.6).conflictingGold).toEqual([{ questionId: Q0, windowId: 'w1' }]);
  });

  it('calibrates layer and verifier questions like trace questions: the verifier is scored against the gold of the question it asks again', () => {
    const windows = [...Array(20).keys()].map((i) => `l${i}`);
    const truth = (i: number): 'yes' | 'no' => (i % 2 === 0 ? 'yes' : 'no');
    const V1 = verifierQuestion(L1_OUTCOME).id;
    const records = windows.flatMap((w, i) => [
      layerResult(w, L1_OUTCOME.point, [[L1_OUTCOME.id, truth(i)]]),
      layerResult(w, `verify-${L1_OUTCOME.point}`, [[V1, truth(i)]]),
    ]);
    // One label per window, on the layer's question: the verifier asks the same question of the same window.
    const rows = windows.map((w, i) => ({ questionId: L1_OUTCOME.id, windowId: w, label: truth(i), source: 'reviewer-a' }));
    const report = calibrate(rows, records, 0.6);
    const layer = report.questions.find((q) => q.target.questionId === L1_OUTCOME.id)!;
    const verifier = report.questions.find((q) => q.target.questionId === V1)!;
    expect(layer).toMatchObject({ n: 20, kappa: 1, qualifies: true, recordOnly: false });
    expect(verifier).toMatchObject({ n: 20, kappa: 1, qualifies: true, recordOnly: false });
    expect(verifier.target.requestContractDigest).toBe(H('d'));
    expect(report.unknownQuestionRows).toBe(0);
  });

  it('never certifies the record-only L4 gap-kind companion, however well it agrees; it is still reported', () => {
    const windows = [...Array(20).keys()].map((i) => `c${i}`);
    const truth = (i: number): 'yes' | 'no' => (i % 2 === 0 ? 'yes' : 'no');
    const records = windows.map((w, i) =>
      layerResult(w, L4_CONTEXT.point, [
        [L4_CONTEXT.id, truth(i)],
        [L4_GAP_KIND.id, truth(i)],
      ]),
    );
    const rows = windows.flatMap((w, i) =>
      [L4_CONTEXT.id, L4_GAP_KIND.id].map((questionId) => ({ questionId, windowId: w, label: truth(i), source: 'reviewer-a' })),
    );
    const report = calibrate(rows, records, 0.6);
    expect(report.questions.find((q) => q.target.questionId === L4_CONTEXT.id)).toMatchObject({ n: 20, kappa: 1, qualifies: true });
    const gap = report.questions.find((q) => q.target.questionId === L4_GAP_KIND.id)!;
    expect(gap).toMatchObject({ n: 20, kappa: 1, qualifies: false, recordOnly: true });
    expect(gap.reasons).toEqual(['record-only question (a companion classification that never routes): never certified']);
    expect(() => certificateFor(gap, 0.6, [{ kind: 'artifact', uri: 'file:/gold.jsonl' }], '2026-01-01T00:00:00Z')).toThrow(/record-only/);
  });
});
