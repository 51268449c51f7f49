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
import type { WindowFate } from '../../src/findings/manifest-schema.ts';

export interface TrailJudgeOptions {
  baseUrl: string;
  model: string;
  answerFormat: AnswerFormat;
  /** Overrides of `windowPolicy.config` (which windows are built, and their caps). */
  windowConfig?: Record<string, unknown>;
  /** `judge.sampling`; default every trajectory (rate 1) with every trigger. */
  sampling?: Record<string, unknown>;
  maxOutputTokens?: number;
  timeoutMs?: number;
  /** `client.contextTokens`: the model's context, or null. */
  contextTokens?: number | null;
  /** Reuse a data directory (and so its ledger): a second run over it replays. */
  dataDir?: string;
  /** Wall-clock time (ms since the epoch) after which no further trajectory is started; the run says how many it reached. */
  deadlineMs?: number;
  /** Told after each trajectory is judged (progress for a long run). */
  onTrajectory?: (done: number, of: number) => void;
}

export interface TrailJudgeRun {
  dataDir: string;
  results: ResultRecord[];
  calls: JudgeCall[];
  findings: Finding[];
  refused: Record<string, number>;
  stats: ReturnType<DecisionPoints['stats']>;
  /** The trajectories judged, in order: all of them unless `deadlineMs` passed first. */
  judged: number;
  /** Every window's fate, as the manifests name them (judged, refused, not sampled; a fallback's detail). */
  fates: WindowFate[];
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
    sampling: o.sampling ?? { rate: 1 },
    budget: { maxConcurrent: 1, callsPerMinute: 1000, maxQueuedWindows: 1000 },
    windowPolicy: { config: o.windowConfig ?? {} },
  });
  const findings: Finding[] = [];
  const calls: JudgeCall[] = [];
  const dp = await DecisionPoints.open(dataDir, cfg, { checks: defaultChecksConfig, onFindings: (f) => findings.push(...f), onCall: (c) => calls.push(c) });
  const fates: WindowFate[] = [];
  let judged = 0;
  for (const t of trajectories) {
    if (o.deadlineMs !== undefined && Date.now() >= o.deadlineMs) break;
    fates.push(...(await dp.consider(t, runChecks(t, defaultChecksConfig), [])).windows);
    o.onTrajectory?.(++judged, trajectories.length);
  }
  await dp.drain();
  const stats = dp.stats();
  await dp.close();
  const results = (await readLedger(join(dataDir, 'judge', 'ledger.jsonl'))).filter((r): r is ResultRecord => r.type === 'result');
  return { dataDir, results, calls, findings, refused: stats.refused, stats, judged, fates };
}

export async function removeRun(run: TrailJudgeRun): Promise<void> {
  await rm(run.dataDir, { recursive: true, force: true });
}
