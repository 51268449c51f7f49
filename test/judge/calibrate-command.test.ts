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
import { answers, completion, startScriptedServer, type ScriptedServer } from './scripted-chat-server.ts';

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
    const first = await judge(dataDir, cfg, [['s1', true], ['s2', false], ['s3', true], ['s4', false], ['s5', false]]);
    expect(first.alarms).toEqual([]);

    const gold = first.findings
      .filter((f) => f.area === Q0)
      .map((f) => {
        const v = (f.observation as unknown as { values: { window_id: string } }).values;
        return { questionId: Q0, windowId: v.window_id, label: f.subject.trajectory_key === 's1' || f.subject.trajectory_key === 's3' ? 'yes' : 'no', source: 'reviewer-a' };
      });
    gold.push({ questionId: Q0, windowId: 'w1_never-judged', label: 'unsure', source: 'reviewer-b' });
    const goldPath = join(dataDir, 'gold.jsonl');
    await writeFile(goldPath, gold.map((g) => JSON.stringify(g)).join('\n') + '\n');
    const reportPath = join(dataDir, 'report.json');
    const certDir = join(dataDir, 'judge', 'certificates');
    const code = await calibrateCommand(['--gold', goldPath, '--ledger', join(dataDir, 'judge', 'ledger.jsonl'), '--out', certDir, '--report', reportPath]);
    expect(code).toBe(0);

    const report = JSON.parse(await readFile(reportPath, 'utf8')) as { questions: { target: { questionId: string }; n: number; kappa: number | null; excludedGold: number; qualifies: boolean }[] };
    const q0 = report.questions.find((q) => q.target.questionId === Q0)!;
    expect(q0).toMatchObject({ n: 5, kappa: 1, excludedGold: 1, qualifies: true });
    const files = await readdir(certDir);
    expect(files).toHaveLength(1);
    const cert = CertificateSchema.parse(JSON.parse(await readFile(join(certDir, files[0]!), 'utf8')));
    expect(cert).toMatchObject({ questionId: Q0, goldN: 5, kappa: 1, requestedModel: 'judge', servedModel: 'judge-model-2025-01' });
    // It binds what the ledger recorded: the layer, the request contract and the evaluator of this judge.
    expect(cert).toMatchObject({
      format: CERTIFICATE_FORMAT,
      windowKind: 'turn',
      requestContractDigest: requestContractDigest(cfg.client),
      evaluatorDigest: evaluatorIdentity(cfg.client).digest,
    });

    const next = await judge(dataDir, cfg, [['s6', true]]);
    expect(next.alarms.map((f) => f.area)).toEqual([Q0]);
  });

  it('refuses invalid gold rows and a minimum kappa below 0.6', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-cal-'));
    const goldPath = join(dir, 'gold.jsonl');
    await writeFile(goldPath, '{"questionId":"x","windowId":"w","label":"maybe","source":"a"}\n');
    await expect(calibrateCommand(['--gold', goldPath, '--ledger', join(dir, 'none.jsonl')])).rejects.toThrow(/line 1: label/);
    await expect(calibrateCommand(['--gold', goldPath, '--min-kappa', '0.5'])).rejects.toThrow(/min-kappa/);
  });
});
