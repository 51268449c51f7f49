import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Finding } from '../../src/findings/schema.ts';
import type { AnswerFormat } from '../../src/judge/answer-format.ts';
import { JudgeConfigSchema } from '../../src/judge/config.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import type { JudgeCall } from '../../src/judge/judge-stats.ts';
import { readLedger } from '../../src/judge/ledger/ledger.ts';
import type { ResultRecord } from '../../src/judge/ledger/record.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';

export interface TrailJudgeOptions {
  baseUrl: string;
  model: string;
  answerFormat: AnswerFormat;
  /** Overrides of `windowPolicy.config` (which windows are built, and their caps). */
  windowConfig?: Record<string, unknown>;
  maxOutputTokens?: number;
  timeoutMs?: number;
  /** `client.contextTokens`: the model's context, or null. */
  contextTokens?: number | null;
  /** Reuse a data directory (and so its ledger): a second run over it replays. */
  dataDir?: string;
}

export interface TrailJudgeRun {
  dataDir: string;
  results: ResultRecord[];
  calls: JudgeCall[];
  findings: Finding[];
  refused: Record<string, number>;
  stats: ReturnType<DecisionPoints['stats']>;
}

/**
 * Judge trajectories end to end as the service does (sampling every trajectory, the real
 * extraction, ledger and client) against a model endpoint, and return what the ledger holds.
 */
export async function judgeTrajectories(trajectories: readonly Trajectory[], o: TrailJudgeOptions): Promise<TrailJudgeRun> {
  const dataDir = o.dataDir ?? (await mkdtemp(join(tmpdir(), 'trajwatch-trail-judge-')));
  const cfg = JudgeConfigSchema.parse({
    enabled: true,
    client: {
      baseUrl: o.baseUrl,
      model: o.model,
      apiKeyEnv: null,
      retries: 0,
      maxOutputTokens: o.maxOutputTokens ?? 256,
      timeoutMs: o.timeoutMs ?? 600_000,
      answerFormat: o.answerFormat,
      contextTokens: o.contextTokens ?? null,
    },
    sampling: { rate: 1 },
    budget: { maxConcurrent: 1, callsPerMinute: 1000, maxQueuedWindows: 1000 },
    windowPolicy: { config: o.windowConfig ?? {} },
  });
  const findings: Finding[] = [];
  const calls: JudgeCall[] = [];
  const dp = await DecisionPoints.open(dataDir, cfg, { checks: defaultChecksConfig, onFindings: (f) => findings.push(...f), onCall: (c) => calls.push(c) });
  for (const t of trajectories) await dp.consider(t, runChecks(t, defaultChecksConfig), []);
  await dp.drain();
  const stats = dp.stats();
  await dp.close();
  const results = (await readLedger(join(dataDir, 'judge', 'ledger.jsonl'))).filter((r): r is ResultRecord => r.type === 'result');
  return { dataDir, results, calls, findings, refused: stats.refused, stats };
}

export async function removeRun(run: TrailJudgeRun): Promise<void> {
  await rm(run.dataDir, { recursive: true, force: true });
}
