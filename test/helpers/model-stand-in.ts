import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { JudgeConfigSchema } from '../../src/judge/config.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import { SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { answers, completion, type ScriptedReply, startScriptedServer, type ScriptedServer } from '../judge/scripted-chat-server.ts';
import { agentRun } from '../windows/builders.ts';
import { runCli } from './cli.ts';

/**
 * A stand-in for the judge's LLM endpoint (vLLM, Ollama, a hosted API), which cannot run
 * here: a real HTTP server speaking Chat Completions whose answers follow the window's
 * content, so that a running `trajwatch serve` records, escalates and alarms for real.
 *
 * - content with `claims done`: question 0 (unverified completion) answers yes — it acts
 *   (a coordinator alarm) once certified, and escalates while it is not;
 * - content with `GARBLED`: an answer that does not parse (a `bad-answer` failure: every
 *   question of the window escalates);
 * - anything else: every question answers no (recorded).
 */
export const CLAIMS_DONE = 'claims done';
export const GARBLED = 'GARBLED';

/** The question the stand-in's answers are calibrated for. */
export const CERTIFIED_QUESTION = SEMANTIC_QUESTIONS[0]!.id;

export function standInReply(body: Record<string, unknown>): ScriptedReply {
  const text = JSON.stringify(body);
  if (text.includes(GARBLED)) {
    return {
      body: {
        model: 'judge-model-2025-01',
        choices: [{ message: { content: 'I would rather not say.' } }],
        usage: { prompt_tokens: 700, completion_tokens: 8 },
      },
    };
  }
  const yes = text.includes(CLAIMS_DONE);
  return { body: completion(answers(yes ? { 0: { letter: 'A', support: 'e1' } } : {})) };
}

export function startModelStandIn(): Promise<ScriptedServer> {
  return startScriptedServer((body) => standInReply(body));
}

/**
 * Issues a certificate for {@link CERTIFIED_QUESTION} the way an operator would: judges
 * twenty agent runs through the stand-in, labels them (gold rows that agree with the
 * stand-in: these are wiring labels, not a calibration), and runs `trajwatch calibrate`.
 * `judge` is the same judge configuration `serve` will run with, so the certificate binds
 * the same model and window policy. Returns the directory holding the certificate.
 */
export async function calibrateWithStandIn(judge: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-calibration-'));
  const certificatesDir = join(dir, 'certificates');
  const cfg = JudgeConfigSchema.parse({ ...judge, certificatesDir });
  const checks = checksConfigSchema.parse({});
  const findings: Finding[] = [];
  const dp = await DecisionPoints.open(dir, cfg, { checks, onFindings: (f) => findings.push(...f) });
  // Twenty runs, ten claiming done: twenty agreeing labels put the lower bound of kappa's 95 %
  // interval at 0.678, above 0.6 (five, as before, gave 0.095: no certificate).
  const keys = [...Array(20).keys()].map((i) => `cal-${i + 1}`);
  const done = new Set(keys.filter((_, i) => i % 2 === 0));
  for (const key of keys) {
    const t = { ...agentRun(1, () => (done.has(key) ? `all finished, ${CLAIMS_DONE}` : 'still working')), key };
    dp.consider(t, runChecks(t, checks), []);
  }
  await dp.drain();
  await dp.close();
  const gold = findings
    .filter((f) => f.area === CERTIFIED_QUESTION)
    .map((f) => ({
      questionId: CERTIFIED_QUESTION,
      windowId: (f.observation as unknown as { values: { window_id: string } }).values.window_id,
      label: done.has(f.subject.trajectory_key) ? 'yes' : 'no',
      source: 'wiring-labels',
    }));
  const goldPath = join(dir, 'gold.jsonl');
  await writeFile(goldPath, gold.map((g) => JSON.stringify(g)).join('\n') + '\n');
  const run = await runCli([
    'calibrate',
    '--gold',
    goldPath,
    '--ledger',
    join(dir, 'judge', 'ledger.jsonl'),
    '--out',
    certificatesDir,
    '--report',
    join(dir, 'report.json'),
  ]);
  const issued = await readdir(certificatesDir).catch(() => []);
  if (run.code !== 0 || issued.length !== 1) {
    throw new Error(`trajwatch calibrate issued ${issued.length} certificates (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
  return certificatesDir;
}
