import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { calibrateCommand } from '../../src/cli/calibrate.ts';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { CERTIFICATE_FORMAT, CertificateSchema } from '../../src/judge/certificate.ts';
import { evaluatorIdentity } from '../../src/judge/evaluator-identity.ts';
import { requestContractDigest } from '../../src/judge/prompt.ts';
import { JudgeConfigSchema } from '../../src/judge/config.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import { SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { agentRun } from '../windows/builders.ts';
import { answers, completion, startScriptedServer, type ScriptedServer } from '../judge/scripted-chat-server.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint, which cannot run here.
// Its answers are scripted to agree with the gold labels; these are wiring labels, not a calibration.

const Q0 = SEMANTIC_QUESTIONS[0]!.id;
const CHECKS = checksConfigSchema.parse({});
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  vi.restoreAllMocks();
});

const claims = (key: string, done: boolean) => ({ ...agentRun(1, () => (done ? 'all done, claims done' : 'still working')), key });

async function judge(dataDir: string, cfg: ReturnType<typeof JudgeConfigSchema.parse>, keys: [string, boolean][]) {
  const out = { findings: [] as Finding[], alarms: [] as Finding[] };
  const dp = await DecisionPoints.open(dataDir, cfg, { checks: CHECKS, onFindings: (f, a) => (out.findings.push(...f), out.alarms.push(...a)) });
  for (const [key, done] of keys) {
    const t = claims(key, done);
    dp.consider(t, runChecks(t, CHECKS), []);
  }
  await dp.drain();
  await dp.close();
  return out;
}

describe('trajwatch calibrate', () => {
  it('joins gold with the ledger, writes a certificate for the qualifying question only, and that certificate lets the next positive alarm', async () => {
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    server = await startScriptedServer((body) => {
      const yes = JSON.stringify(body).includes('claims done');
      return { body: completion(answers({ 0: { letter: yes ? 'A' : 'B', support: 'e1', p: 0.97 } })) };
    });
    const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-cal-'));
    const cfg = JudgeConfigSchema.parse({ enabled: true, client: { baseUrl: server.baseUrl, model: 'judge' }, sampling: { rate: 0 } });
    // 20 windows, 10 claiming done: with every label agreeing, the 95 % interval's lower bound
    // is 0.678 (Wilson, 20 of 20), above 0.6. Five would not do (0.095): see the refusal below.
    const keys = [...Array(20).keys()].map((i): [string, boolean] => [`s${i + 1}`, i % 2 === 0]);
    const done = new Map(keys);
    const first = await judge(dataDir, cfg, keys);
    expect(first.alarms).toEqual([]);

    const gold = first.findings
      .filter((f) => f.area === Q0)
      .map((f) => {
        const v = (f.observation as unknown as { values: { window_id: string } }).values;
        return { questionId: Q0, windowId: v.window_id, label: done.get(f.subject.trajectory_key)! ? 'yes' : 'no', source: 'reviewer-a' };
      });
    gold.push({ questionId: Q0, windowId: 'w1_never-judged', label: 'unsure', source: 'reviewer-b' });
    const goldPath = join(dataDir, 'gold.jsonl');
    await writeFile(goldPath, gold.map((g) => JSON.stringify(g)).join('\n') + '\n');
    const reportPath = join(dataDir, 'report.json');
    const certDir = join(dataDir, 'judge', 'certificates');
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((t) => (out.push(String(t)), true));
    const code = await calibrateCommand(['--gold', goldPath, '--ledger', join(dataDir, 'judge', 'ledger.jsonl'), '--out', certDir, '--report', reportPath]);
    expect(code).toBe(0);
    expect(out.join('')).toMatch(/kappa=1\.000 95% \[0\.678, 1\.000\]/);

    const report = JSON.parse(await readFile(reportPath, 'utf8')) as {
      questions: { target: { questionId: string }; n: number; kappa: number | null; excludedGold: number; qualifies: boolean }[];
    };
    const q0 = report.questions.find((q) => q.target.questionId === Q0)!;
    expect(q0).toMatchObject({ n: 20, kappa: 1, excludedGold: 1, qualifies: true });
    const files = await readdir(certDir);
    expect(files).toHaveLength(1);
    const cert = CertificateSchema.parse(JSON.parse(await readFile(join(certDir, files[0]!), 'utf8')));
    expect(cert).toMatchObject({ questionId: Q0, goldN: 20, kappa: 1, requestedModel: 'judge', servedModel: 'judge-model-2025-01' });
    expect(cert.format === CERTIFICATE_FORMAT && cert.kappaInterval.lower).toBeCloseTo(0.678, 3);
    // It binds what the ledger recorded: the layer, the request contract and the evaluator of this judge.
    expect(cert).toMatchObject({
      format: CERTIFICATE_FORMAT,
      windowKind: 'turn',
      requestContractDigest: requestContractDigest(cfg.client),
      evaluatorDigest: evaluatorIdentity(cfg.client).digest,
    });

    const next = await judge(dataDir, cfg, [['s21', true]]);
    expect(next.alarms.map((f) => f.area)).toEqual([Q0]);
  });

  it('writes no certificate from five agreeing labels, and prints the interval and roughly how many more labels it would take', async () => {
    server = await startScriptedServer((body) => ({
      body: completion(answers({ 0: { letter: JSON.stringify(body).includes('claims done') ? 'A' : 'B', support: 'e1', p: 0.97 } })),
    }));
    const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-cal-'));
    const cfg = JudgeConfigSchema.parse({ enabled: true, client: { baseUrl: server.baseUrl, model: 'judge' }, sampling: { rate: 0 } });
    const keys: [string, boolean][] = [
      ['s1', true],
      ['s2', false],
      ['s3', true],
      ['s4', false],
      ['s5', false],
    ];
    const { findings } = await judge(dataDir, cfg, keys);
    const done = new Map(keys);
    const gold = findings
      .filter((f) => f.area === Q0)
      .map((f) => ({
        questionId: Q0,
        windowId: (f.observation as unknown as { values: { window_id: string } }).values.window_id,
        label: done.get(f.subject.trajectory_key)! ? 'yes' : 'no',
        source: 'reviewer-a',
      }));
    const goldPath = join(dataDir, 'gold.jsonl');
    await writeFile(goldPath, gold.map((g) => JSON.stringify(g)).join('\n') + '\n');
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((t) => (out.push(String(t)), true));
    const certDir = join(dataDir, 'judge', 'certificates');
    expect(await calibrateCommand(['--gold', goldPath, '--ledger', join(dataDir, 'judge', 'ledger.jsonl'), '--out', certDir])).toBe(0);
    const text = out.join('');
    // gold yes 2, no 3, all agreeing: kappa 1, but the lower bound is (0.5655 − 0.52) / 0.48 = 0.095.
    expect(text).toMatch(/n=5 .*kappa=1\.000 95% \[0\.095, 1\.000\]/);
    expect(text).toMatch(
      /does not qualify: lower bound 0\.095 of the 95 % interval \[0\.095, 1\.000\] is below 0\.6 \(n 5\): roughly 1[0-9] more labels \(\d+ in all\) would be needed if kappa and the label shares held \(an estimate\)/,
    );
    expect(text).toContain('no certificate written');
    await expect(readdir(certDir)).rejects.toThrow(/ENOENT/);
  });

  it('refuses invalid gold rows and a minimum kappa below 0.6', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-cal-'));
    const goldPath = join(dir, 'gold.jsonl');
    await writeFile(goldPath, '{"questionId":"x","windowId":"w","label":"maybe","source":"a"}\n');
    await expect(calibrateCommand(['--gold', goldPath, '--ledger', join(dir, 'none.jsonl')])).rejects.toThrow(/line 1: label/);
    await expect(calibrateCommand(['--gold', goldPath, '--min-kappa', '0.5'])).rejects.toThrow(/min-kappa/);
  });
});
