import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { reliabilityCommand } from '../../src/cli/reliability.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { GoldRow } from '../../src/calibration/calibrate.ts';
import { JudgeConfigSchema } from '../../src/judge/config.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import { readLedger } from '../../src/judge/ledger/ledger.ts';
import { SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { KAPPA_CAVEAT, reliability } from '../../src/calibration/reliability.ts';
import { L1_OUTCOME, L4_CONTEXT, L4_GAP_KIND, verifierQuestion } from '../../src/judge/walk/layer-questions.ts';
import { agentRun } from '../windows/builders.ts';
import { layerResult } from '../judge/walk/layer-records.ts';
import { CHROMIUM } from '../helpers/cdp.ts';
import { answers, completion, startScriptedServer, type ScriptedServer } from '../judge/scripted-chat-server.ts';
import { CHECKS } from '../judge/judge-harness.ts';

// A ledger made by a real judge run (DecisionPoints, its HTTP client and ledger files) against
// the scripted Chat Completions server, which stands in for the judge's LLM endpoint: the
// answers' probabilities are scripted so the curve has something to show. The labels are
// synthetic (agreeing with the judge about as often as its probability says, deterministically),
// wiring labels, not a calibration.

const [Q0, Q1, Q2] = SEMANTIC_QUESTIONS.map((q) => q.id) as [string, string, string];
const N = 40;
const FAILING = new Set([7, 23]);
const prob = (i: number) => 0.5 + (0.49 * i) / (N - 1);
/** Whether the (synthetic) label agrees with the judge on case i: for a share of cases close to its probability. */
const agrees = (i: number) => ((i * 37) % N) / N < prob(i);

let server: ScriptedServer | undefined;
afterAll(() => server?.close());

async function judgedLedger(
  o: { n: number; prob: (i: number) => number; failing: ReadonlySet<number>; agrees: (i: number) => boolean } = { n: N, prob, failing: FAILING, agrees },
) {
  const { n: N, prob, failing: FAILING, agrees } = o;
  server?.close();
  server = await startScriptedServer((body) => {
    const i = Number(/case-(\d+)/.exec(JSON.stringify(body))?.[1]);
    if (FAILING.has(i)) return { status: 500, body: { error: { message: 'model overloaded' } } };
    return { body: completion(answers({ 0: { letter: i % 2 === 0 ? 'A' : 'B', support: 'e2', p: prob(i) } })) };
  });
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-rel-'));
  const cfg = JudgeConfigSchema.parse({
    enabled: true,
    client: { baseUrl: server.baseUrl, model: 'judge', retries: 0 },
    sampling: { rate: 0 },
    budget: { callsPerMinute: 1000 },
  });
  const dp = await DecisionPoints.open(dataDir, cfg, { checks: CHECKS, onFindings: () => undefined });
  const windowOf = new Map<number, string>();
  for (let i = 0; i < N; i++) {
    const t = { ...agentRun(1, () => `case-${i}`), key: `case-${i}` };
    dp.consider(t, runChecks(t, CHECKS), []);
  }
  await dp.drain();
  await dp.close();
  const ledger = join(dataDir, 'judge', 'ledger.jsonl');
  const records = await readLedger(ledger);
  for (const r of records) if (r.type === 'intent') windowOf.set(Number(r.key.runId.slice(5)), r.window.windowId);
  const gold: GoldRow[] = [];
  for (let i = 0; i < N; i++) {
    const judgeSaid = i % 2 === 0 ? 'yes' : 'no';
    const other = judgeSaid === 'yes' ? 'no' : 'yes';
    gold.push({
      questionId: Q0,
      windowId: windowOf.get(i)!,
      label: agrees(i) ? judgeSaid : other,
      source: 'synthetic',
      support: i % 4 === 0 ? 'e2' : i % 4 === 1 ? 'e1' : null,
    });
  }
  gold.push({ questionId: Q1, windowId: windowOf.get(0)!, label: 'no', source: 'synthetic' });
  gold.push({ questionId: Q2, windowId: windowOf.get(0)!, label: 'unsure', source: 'synthetic' });
  const goldPath = join(dataDir, 'judge', 'gold.jsonl');
  await writeFile(goldPath, gold.map((g) => JSON.stringify(g)).join('\n') + '\n');
  return { dataDir, ledger, goldPath, records, gold };
}

describe('reliability(): outcome labels joined to decisions', () => {
  it('counts per question, draws the curve from labeled answers with probabilities, keeps failed calls in every denominator, and lists the support choices apart', async () => {
    const { records, gold, dataDir, ledger, goldPath } = await judgedLedger();
    const r = reliability(records, gold);
    expect(r).toMatchObject({ decisions: N, failedCalls: 2, labeledDecisions: N, missingOutcomes: 0, conflictingGold: 0, caveat: KAPPA_CAVEAT });
    const q0 = r.questions.find((q) => q.target.questionId === Q0)!;
    expect(r.questions.filter((q) => q.target.questionId === Q0)).toHaveLength(1); // failed calls (no served model) stay in the group
    expect(q0).toMatchObject({ decisions: N, labeled: N, failed: 2, withoutProbabilities: 0, excluded: 0 });
    const answered = [...Array(N).keys()].filter((i) => !FAILING.has(i));
    expect(q0.accuracy).toBeCloseTo(answered.filter(agrees).length / N, 12);
    // The curve: every answered, labeled case in exactly one bin; failed calls on none.
    expect(q0.curve!.reduce((s, b) => s + b.n, 0)).toBe(answered.length);
    const top = answered.filter((i) => prob(i) >= 0.9);
    const topBin = q0.curve!.find((b) => b.lo === 0.9)!;
    expect(topBin.n).toBe(top.length);
    expect(topBin.accuracy).toBeCloseTo(top.filter(agrees).length / top.length, 12);
    expect(topBin.meanProbability).toBeCloseTo(top.reduce((s, i) => s + prob(i), 0) / top.length, 12);
    // Thresholds: coverage over all labeled decisions, the failed ones included.
    const at8 = q0.thresholds.find((t) => t.threshold === 0.8)!;
    const above8 = answered.filter((i) => prob(i) >= 0.8);
    expect(at8).toEqual({
      threshold: 0.8,
      above: above8.length,
      correct: above8.filter(agrees).length,
      accuracy: above8.filter(agrees).length / above8.length,
      coverage: above8.length / N,
    });
    expect(q0.thresholds.find((t) => t.threshold === 0.5)!.coverage).toBe(38 / 40);
    // One label is no curve; an unsure label is an exclusion, not an outcome.
    expect(r.questions.find((q) => q.target.questionId === Q1)).toMatchObject({ labeled: 1, curve: null });
    expect(r.questions.find((q) => q.target.questionId === Q2)).toMatchObject({ labeled: 0, excluded: 1, curve: null, accuracy: null });
    // Record-only: the support choices are apart, never among the curves.
    expect(r.questions.some((q) => q.target.questionId.endsWith('.support'))).toBe(false);
    const s0 = r.recordOnlyQuestions.find((s) => s.questionId === `${Q0}.support`)!;
    const withSupport = answered.filter((i) => i % 4 === 0 || i % 4 === 1);
    expect(s0).toEqual({
      questionId: `${Q0}.support`,
      decisions: N,
      labeled: withSupport.length,
      agreement: withSupport.filter((i) => i % 4 === 0).length / withSupport.length,
    });

    // The command prints the same report, the caveat, and writes the PNG with real Chromium.
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    const png = process.env.TRAJWATCH_RELIABILITY_PNG ?? join(dataDir, 'reliability.png');
    const args = ['--ledger', ledger, '--gold', goldPath, ...(existsSync(CHROMIUM) ? ['--png', png] : ['--no-png'])];
    expect(await reliabilityCommand(args)).toBe(0);
    vi.restoreAllMocks();
    const text = out.join('');
    if (process.env.TRAJWATCH_RELIABILITY_TEXT !== undefined) await writeFile(process.env.TRAJWATCH_RELIABILITY_TEXT, text);
    expect(text).toContain(`caveat: ${KAPPA_CAVEAT}`);
    expect(text).toContain(`decisions ${N} (failed calls 2), labeled ${N}`);
    expect(text).toContain(`${Q1}@1`);
    expect(text).toContain('curve: null (fewer than two labeled answers with probabilities)');
    expect(text).toContain(`${Q0}.support: decisions ${N}`);
    // Without a working Chromium the report is still printed, and the command fails saying why.
    const again: string[] = [];
    const errors: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (again.push(String(s)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => (errors.push(String(s)), true));
    vi.stubEnv('TRAJWATCH_CHROMIUM', '/bin/false');
    expect(await reliabilityCommand(['--ledger', ledger, '--gold', goldPath, '--png', join(dataDir, 'none.png')])).toBe(1);
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
    expect(again.join('')).toContain(`caveat: ${KAPPA_CAVEAT}`);
    expect(errors.join('')).toContain('no PNG written: Chromium could not draw the PNG');
    expect(existsSync(join(dataDir, 'none.png'))).toBe(false);
    if (existsSync(CHROMIUM)) {
      const bytes = await readFile(png);
      expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(bytes.readUInt32BE(16)).toBe(1280); // IHDR width
      expect(bytes.length).toBeGreaterThan(20_000);
    }
  }, 120_000);
});

describe('the reliability chart, as trajwatch reliability draws it', () => {
  // Bins of 1, 6, 6 and 1 labels: 0.55, 0.65 ×6, 0.75 ×6, 0.95; the judge agrees with 5 of each 6.
  const P = [0.55, ...Array(6).fill(0.65), ...Array(6).fill(0.75), 0.95] as number[];
  it('draws a 95 % interval on every bin, its n in a row under the axis clear of the subtitles, joins only adjacent bins of enough labels, and draws no panel for a question without labels', async () => {
    const { dataDir, ledger, goldPath } = await judgedLedger({ n: P.length, prob: (i) => P[i]!, failing: new Set(), agrees: (i) => i % 6 !== 3 });
    const svgPath = join(dataDir, 'chart.svg');
    const png = join(dataDir, 'chart.png');
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    expect(
      await reliabilityCommand(['--ledger', ledger, '--gold', goldPath, '--svg', svgPath, ...(existsSync(CHROMIUM) ? ['--png', png] : ['--no-png'])]),
    ).toBe(0);
    vi.restoreAllMocks();
    const svg = await readFile(svgPath, 'utf8');
    const panels = [...svg.matchAll(/<g class="panel" data-question="([^"]+)">([\s\S]*?)<\/g>/g)].map((m) => ({ q: m[1]!, body: m[2]! }));
    // Q0 (14 labels) and Q1 (one label: no curve) have panels; Q2 (only "unsure") and the unlabeled questions have none.
    expect(panels.map((p) => p.q)).toEqual([Q0, Q1]);
    expect(svg).toContain(`${SEMANTIC_QUESTIONS.length - 2} question groups without labels not drawn`);
    const q0 = panels[0]!.body;
    const num = (s: string, attr: string) => Number(new RegExp(`${attr}="([-0-9.]+)"`).exec(s)![1]);
    const bins = [...q0.matchAll(/<circle class="bin" data-n="(\d+)" cx="([0-9.]+)" cy="([0-9.]+)"[^>]*fill-opacity="([0-9.]+)"/g)].map((m) => ({
      n: Number(m[1]),
      cx: Number(m[2]),
      cy: Number(m[3]),
      opacity: Number(m[4]),
    }));
    expect(bins.map((b) => b.n)).toEqual([1, 6, 6, 1]);
    // A sparse bin is fainter than a full one.
    expect(bins[0]!.opacity).toBeLessThan(bins[1]!.opacity);
    // Every bin has an interval through its point; a bin of one label has a wide one.
    const intervals = [...q0.matchAll(/<line class="interval" data-n="(\d+)"[^>]*>/g)].map((m) => ({
      n: Number(m[1]),
      x: num(m[0], 'x1'),
      y1: num(m[0], 'y1'),
      y2: num(m[0], 'y2'),
    }));
    expect(intervals).toHaveLength(4);
    intervals.forEach((iv, i) => {
      expect(iv.x).toBe(bins[i]!.cx);
      expect(Math.min(iv.y1, iv.y2)).toBeLessThanOrEqual(bins[i]!.cy);
      expect(Math.max(iv.y1, iv.y2)).toBeGreaterThanOrEqual(bins[i]!.cy);
    });
    expect(Math.abs(intervals[0]!.y1 - intervals[0]!.y2)).toBeGreaterThan(Math.abs(intervals[1]!.y1 - intervals[1]!.y2));
    // One line, joining the two bins of six only: none runs to a bin of one.
    const lines = [...q0.matchAll(/<polyline class="curve"[^>]*points="([^"]+)"/g)].map((m) => m[1]!.split(' '));
    expect(lines).toEqual([[`${bins[1]!.cx.toFixed(1)},${bins[1]!.cy.toFixed(1)}`, `${bins[2]!.cx.toFixed(1)},${bins[2]!.cy.toFixed(1)}`]]);
    // The counts: one per bin, below the plot, under the subtitle, not on one another.
    const subtitleY = num(/<text class="subtitle"[^>]*>/.exec(q0)![0], 'y');
    const counts = [...q0.matchAll(/<text class="bin-n" x="([0-9.]+)" y="([0-9.]+)"[^>]*>(\d+)</g)].map((m) => ({
      x: Number(m[1]),
      y: Number(m[2]),
      n: Number(m[3]),
    }));
    expect(counts.map((c) => c.n)).toEqual([1, 6, 6, 1]);
    for (const c of counts) expect(c.y).toBeGreaterThan(Math.max(...bins.map((b) => b.cy)) + 10);
    for (const c of counts) expect(c.y).toBeGreaterThan(subtitleY + 12);
    for (let i = 1; i < counts.length; i++) expect(counts[i]!.x - counts[i - 1]!.x).toBeGreaterThanOrEqual(18);
    if (existsSync(CHROMIUM)) expect((await readFile(png)).subarray(1, 4).toString()).toBe('PNG');
  }, 120_000);
});

describe('reliability() of layer and verifier questions', () => {
  it("reads their gold as it reads a trace question's: layer, verifier (against the gold of the question it asks again) and the record-only gap kind, marked so", () => {
    const V1 = verifierQuestion(L1_OUTCOME).id;
    const ws = [...Array(10).keys()].map((i) => `l${i}`);
    const truth = (i: number): 'yes' | 'no' => (i < 5 ? 'yes' : 'no');
    // The judge is right on 8 of 10 (wrong on l0 and l9), the verifier on all 10, the gap kind on 9.
    const said = (i: number): 'yes' | 'no' => (i === 0 ? 'no' : i === 9 ? 'yes' : truth(i));
    const records = ws.flatMap((w, i) => [
      layerResult(w, L1_OUTCOME.point, [[L1_OUTCOME.id, said(i)]], 0.9),
      layerResult(w, `verify-${L1_OUTCOME.point}`, [[V1, truth(i)]], 0.8),
      layerResult(
        `c${i}`,
        L4_CONTEXT.point,
        [
          [L4_CONTEXT.id, truth(i)],
          [L4_GAP_KIND.id, i === 3 ? 'no' : truth(i)],
        ],
        0.7,
      ),
    ]);
    const gold: GoldRow[] = ws.flatMap((w, i) => [
      { questionId: L1_OUTCOME.id, windowId: w, label: truth(i), source: 'reviewer-a' },
      { questionId: L4_CONTEXT.id, windowId: `c${i}`, label: truth(i), source: 'reviewer-a' },
      { questionId: L4_GAP_KIND.id, windowId: `c${i}`, label: truth(i), source: 'reviewer-a' },
    ]);
    const r = reliability(records, gold);
    const of = (id: string) => r.questions.find((q) => q.target.questionId === id)!;
    expect(of(L1_OUTCOME.id)).toMatchObject({ decisions: 10, labeled: 10, accuracy: 0.8, recordOnly: false });
    expect(of(L1_OUTCOME.id).curve).toEqual([{ lo: expect.closeTo(0.9, 12), hi: 1, n: 10, meanProbability: expect.closeTo(0.9, 12), accuracy: 0.8 }]);
    expect(of(V1)).toMatchObject({ decisions: 10, labeled: 10, accuracy: 1, recordOnly: false });
    expect(of(L4_CONTEXT.id)).toMatchObject({ labeled: 10, accuracy: 1 });
    expect(of(L4_GAP_KIND.id)).toMatchObject({ labeled: 10, accuracy: 0.9, recordOnly: true });
    expect(r.labeledDecisions).toBe(20);
    // Catalog order: trace questions, then the layers', then the verifiers'.
    const order = r.questions.map((q) => q.target.questionId);
    expect(order.indexOf(L1_OUTCOME.id)).toBeLessThan(order.indexOf(L4_GAP_KIND.id));
    expect(order.indexOf(L4_GAP_KIND.id)).toBeLessThan(order.indexOf(V1));
  });
});
