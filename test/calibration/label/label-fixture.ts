import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Trajectory } from '../../../src/assemble/trajectory.ts';
import { checksConfigSchema } from '../../../src/checks/config.ts';
import { runChecks } from '../../../src/checks/run-checks.ts';
import { createAuthCheck, type ReceiverAuth } from '../../../src/ingest/otlp/auth.ts';
import { JudgeConfigSchema, type JudgeConfig } from '../../../src/judge/config.ts';
import { DecisionPoints } from '../../../src/judge/decision-points.ts';
import { GoldStore } from '../../../src/calibration/gold-store.ts';
import { LabelData } from '../../../src/calibration/label/label-data.ts';
import { startLabelServer, type LabelServerOptions } from '../../../src/calibration/label/label-server.ts';
import { agentRun } from '../../windows/builders.ts';
import { answers, completion, startScriptedServer, type ScriptedServer } from '../../judge/scripted-chat-server.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint here: the page's
// tests need answers we know. Labels given through the page are wiring labels, not a calibration.

export const CHECKS = checksConfigSchema.parse({});

/** A trajectory whose last tool result claims it is done (the judge answers "yes" to question 0) or not. */
export const claims = (key: string, done: boolean) => ({ ...agentRun(1, () => (done ? 'all done, claims done' : 'still working')), key });

export interface Judged {
  dataDir: string;
  cfg: JudgeConfig;
  model: ScriptedServer;
  ledger: string;
  windows: string;
  gold: string;
}

/** Judges one turn window per trajectory against the scripted server; the judge says yes to question 0 exactly when the trajectory claims done. */
export async function judgeWindows(
  keys: readonly [string, boolean][],
  over: Record<string, unknown> = {},
  build: (key: string, done: boolean) => Trajectory = claims,
): Promise<Judged> {
  const model = await startScriptedServer((body) => {
    const yes = JSON.stringify(body).includes('claims done');
    return { body: completion(answers({ 0: { letter: yes ? 'A' : 'B', support: 'e2', p: 0.95 } })) };
  });
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-label-'));
  const cfg = JudgeConfigSchema.parse({ enabled: true, client: { baseUrl: model.baseUrl, model: 'judge', backoffMs: 1 }, sampling: { rate: 0 }, ...over });
  const dp = await DecisionPoints.open(dataDir, cfg, { checks: CHECKS, onFindings: () => undefined });
  for (const [key, done] of keys) {
    const t = build(key, done);
    dp.consider(t, runChecks(t, CHECKS), []);
  }
  await dp.drain();
  await dp.close();
  return {
    dataDir,
    cfg,
    model,
    ledger: join(dataDir, 'judge', 'ledger.jsonl'),
    windows: join(dataDir, 'judge', 'label-windows'),
    gold: join(dataDir, 'judge', 'gold.jsonl'),
  };
}

/** The label server over a judged data directory, as `trajwatch label` starts it. */
export async function serveLabels(
  j: Judged,
  o: { auth?: ReceiverAuth; env?: Record<string, string>; reveal?: boolean; trajectory?: LabelServerOptions['trajectory'] } = {},
) {
  const gold = await GoldStore.open(j.gold);
  const data = new LabelData({ ledger: j.ledger, windows: j.windows }, gold, j.cfg.decision.minKappa);
  const started = await startLabelServer(
    { data, auth: createAuthCheck(o.auth, o.env), authRequired: o.auth !== undefined, reveal: o.reveal ?? false, trajectory: o.trajectory },
    '127.0.0.1',
    0,
  );
  return { ...started, gold, close: () => new Promise<void>((r) => started.server.close(() => r())) };
}
