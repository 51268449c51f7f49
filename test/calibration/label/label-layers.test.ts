import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { calibrateCommand } from '../../../src/cli/calibrate.ts';
import { CertificateSchema } from '../../../src/judge/certificate.ts';
import { readGold } from '../../../src/calibration/gold-store.ts';
import { L1_OUTCOME, verifierQuestion } from '../../../src/judge/walk/layer-questions.ts';
import { readLedger } from '../../../src/judge/ledger/ledger.ts';
import type { IntentRecord, LedgerRecord } from '../../../src/judge/ledger/record.ts';
import { SEMANTIC_QUESTIONS } from '../../../src/judge/questions.ts';
import { reliability } from '../../../src/calibration/reliability.ts';
import { harness, judgeAll } from '../../judge/judge-harness.ts';
import { requestOf, walkScript } from '../../judge/walk/walk-harness.ts';
import { claims, serveLabels, type Judged } from './label-fixture.ts';

// The layered walk judged by the real DecisionPoints against the scripted Chat Completions server,
// which stands in for the judge's LLM endpoint (no LLM runs here): L1 says "yes" (outside the
// expected exits) exactly when the run claims it is done. Labels given here are wiring labels.

const Q0 = SEMANTIC_QUESTIONS[0]!.id;
const L1 = L1_OUTCOME.id;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

type Loose = any;
const intents = (records: readonly LedgerRecord[], point: string) => records.filter((r): r is IntentRecord => r.type === 'intent' && r.key.point === point);
const json = async (r: Response | Promise<Response>): Promise<Loose> => (await r).json();

async function walked(n: number): Promise<{ j: Judged; done: Map<string, boolean> }> {
  const h = await harness(
    (body) => {
      const r = requestOf(body);
      const yes = r.role === 'layer' && r.questionIds[0] === L1 && JSON.stringify(body).includes('claims done');
      return walkScript(yes ? { [L1]: { letter: 'A', p: 0.93 } } : {})(body);
    },
    {},
    { walk: { enabled: true }, budget: { callsPerMinute: 1000 } },
  );
  cleanups.push(() => h.server.close());
  const keys = [...Array(n).keys()].map((i): [string, boolean] => [`walk-${i}`, i % 2 === 0]);
  await judgeAll(
    h.dataDir,
    h.cfg,
    keys.map(([k, d]) => claims(k, d)),
  );
  const j: Judged = {
    dataDir: h.dataDir,
    cfg: h.cfg,
    model: h.server,
    ledger: join(h.dataDir, 'judge', 'ledger.jsonl'),
    windows: join(h.dataDir, 'judge', 'label-windows'),
    gold: join(h.dataDir, 'judge', 'gold.jsonl'),
  };
  return { j, done: new Map(keys) };
}

describe('labeling layer questions', () => {
  it('keeps the windows the walk judged, offers each the questions asked of it, blind, and refuses a question not asked there', {
    timeout: 60_000,
  }, async () => {
    const { j, done } = await walked(2);
    const s = await serveLabels(j);
    cleanups.push(s.close);
    const records = await readLedger(j.ledger);
    const l1Windows = intents(records, L1_OUTCOME.point).map((r) => r.window.windowId);
    expect(l1Windows).toHaveLength(2);
    const stored = (await readdir(j.windows)).map((n) => n.replace(/\.json$/, ''));
    // Every window any layer judged is kept for labeling, not only those the trace questions judged too.
    const layerWindows = records.filter((r): r is IntentRecord => r.type === 'intent' && r.key.point.startsWith('layer-')).map((r) => r.window.windowId);
    const traceWindows = new Set(intents(records, 'trace-questions@1').map((r) => r.window.windowId));
    expect(layerWindows.filter((w) => !traceWindows.has(w)).length).toBeGreaterThan(0);
    expect(layerWindows.filter((w) => !stored.includes(w))).toEqual([]);
    const list = await json(fetch(new URL('/api/windows?labeler=ann', s.url)));
    for (const w of l1Windows) {
      const summary = list.windows.find((x: Loose) => x.windowId === w);
      expect(summary).toBeDefined();
      const shown = await json(fetch(new URL(`/api/windows/${w}?labeler=ann`, s.url)));
      const ids = shown.questions.map((q: Loose) => q.id);
      // The layer's question is offered; its verifier's never is (the labels of the question it asks again score it).
      expect(ids).toContain(L1);
      expect(ids.some((id: string) => id.startsWith('verify.'))).toBe(false);
      expect(summary.questions).toBe(ids.length);
      expect(shown.questions.find((q: Loose) => q.id === L1).judge).toBe('hidden');
    }
    const w0 = l1Windows[0]!;
    const key = intents(records, L1_OUTCOME.point).find((r) => r.window.windowId === w0)!.key.runId;
    const origin = new URL(s.url).origin;
    const post = (body: unknown) =>
      fetch(new URL('/api/labels', s.url), { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: JSON.stringify(body) });
    const r = await post({ windowId: w0, questionId: L1, label: done.get(key) ? 'yes' : 'no', support: null, labeler: 'ann' });
    expect(r.status).toBe(201);
    expect((await json(r)).judge.option).toBe(done.get(key) ? 'yes' : 'no');
    // A verifier's question is labeled as the layer's, never on its own.
    const v = await post({ windowId: w0, questionId: verifierQuestion(L1_OUTCOME).id, label: 'yes', support: null, labeler: 'ann' });
    expect([v.status, (await json(v)).error]).toEqual([404, 'unknown-question']);
    // A trace question on a window the trace questions did not judge would be a missing prediction in calibration: refused.
    const layerOnly = records.find((r): r is IntentRecord => r.type === 'intent' && r.key.point.startsWith('layer-') && !traceWindows.has(r.window.windowId))!;
    const t = await post({ windowId: layerOnly.window.windowId, questionId: Q0, label: 'no', support: null, labeler: 'ann' });
    const body = await json(t);
    expect([t.status, body.error]).toEqual([422, 'question-not-asked']);
    expect(body.message).toMatch(/it was asked layer\./);
    const offered = await json(fetch(new URL(`/api/windows/${layerOnly.window.windowId}?labeler=ann`, s.url)));
    expect(offered.questions.map((q: Loose) => q.id).every((id: string) => id.startsWith('layer.'))).toBe(true);
    expect(await readGold(j.gold)).toHaveLength(1);
  });

  it('the labels of a layer question certify it through calibrate, and reliability reads them', { timeout: 120_000 }, async () => {
    const { j, done } = await walked(16);
    const s = await serveLabels(j);
    cleanups.push(s.close);
    const records = await readLedger(j.ledger);
    const origin = new URL(s.url).origin;
    const l1 = intents(records, L1_OUTCOME.point);
    expect(l1).toHaveLength(16);
    for (const r of l1) {
      const res = await fetch(new URL('/api/labels', s.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({
          windowId: r.window.windowId,
          questionId: L1,
          label: done.get(r.key.runId) ? 'yes' : 'no',
          support: null,
          labeler: 'reviewer-a',
        }),
      });
      expect(res.status).toBe(201);
    }
    const review = await json(fetch(new URL('/api/review', s.url)));
    expect(review.questions.find((q: Loose) => q.target.questionId === L1)).toMatchObject({ n: 16, kappa: 1, qualifies: true });

    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const certDir = join(j.dataDir, 'judge', 'certificates');
    expect(await calibrateCommand(['--gold', j.gold, '--ledger', j.ledger, '--out', certDir])).toBe(0);
    vi.restoreAllMocks();
    const files = await readdir(certDir);
    expect(files).toHaveLength(1);
    const cert = CertificateSchema.parse(JSON.parse(await readFile(join(certDir, files[0]!), 'utf8')));
    expect(cert).toMatchObject({ questionId: L1, goldN: 16, kappa: 1 });

    const rel = reliability(records, await readGold(j.gold));
    expect(rel.questions.find((q) => q.target.questionId === L1)).toMatchObject({ decisions: 16, labeled: 16, accuracy: 1 });
  });
});
