import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { JudgeConfigSchema, type JudgeConfig } from '../../src/judge/config.ts';
import { DecisionPoints, type JudgeCall } from '../../src/judge/decision-points.ts';
import { at, toolArgs, traj } from '../windows/builders.ts';
import { startScriptedServer, type ScriptedReply, type ScriptedServer } from './scripted-chat-server.ts';

// Drives the real DecisionPoints (windows, HTTP client, ledger files, findings) against the
// scripted Chat Completions server, which stands in for the judge's LLM endpoint: no LLM can
// run here.

export const CHECKS = checksConfigSchema.parse({});
export const SERVED = 'judge-model-2025-01';

/** An agent that deploys and emails (outbound: event windows) and ends with a claim (terminal: a turn window). */
export function deployRun(key = 'deploy-run', result = 'deploy queued'): Trajectory {
  const root = at(1, {
    kind: 'agent',
    name: 'invoke_agent',
    agentName: 'release-bot',
    input: 'Deploy v2 and email the team when done.',
    endTimeUnixNano: at(100).startTimeUnixNano,
  });
  return {
    ...traj([
      root,
      at(2, { parentId: root.id, kind: 'llm', name: 'chat', input: 'plan the release', result: 'I will deploy now.' }),
      at(3, { parentId: root.id, toolName: 'deploy', args: toolArgs('{"version":"v2"}'), result }),
      at(4, { parentId: root.id, toolName: 'send_email', args: toolArgs('{"to":"team@example.com","body":"Deployed and verified!"}'), result: 'sent' }),
      at(5, { parentId: root.id, kind: 'llm', name: 'chat', result: 'Done: v2 is deployed and verified.' }),
    ]),
    key,
  };
}

export interface Harness {
  server: ScriptedServer;
  dataDir: string;
  cfg: JudgeConfig;
}

export async function harness(
  script: (body: Record<string, unknown>, n: number) => ScriptedReply,
  client: Record<string, unknown> = {},
  over: Record<string, unknown> = {},
): Promise<Harness> {
  const server = await startScriptedServer(script);
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-judge-h-'));
  const cfg = JudgeConfigSchema.parse({
    enabled: true,
    client: { baseUrl: server.baseUrl, model: 'judge', backoffMs: 1, timeoutMs: 5_000, ...client },
    sampling: { rate: 0 },
    ...over,
  });
  return { server, dataDir, cfg };
}

export interface Judged {
  findings: Finding[];
  alarms: Finding[];
  calls: JudgeCall[];
  dp: DecisionPoints;
}

/** Open decision points on `dataDir`, consider each trajectory, drain, close. */
export async function judgeAll(dataDir: string, cfg: JudgeConfig, runs: readonly Trajectory[] = [deployRun()], now?: () => number): Promise<Judged> {
  const out: Judged = { findings: [], alarms: [], calls: [], dp: undefined as unknown as DecisionPoints };
  out.dp = await DecisionPoints.open(dataDir, cfg, {
    checks: CHECKS,
    onFindings: (f, a) => {
      out.findings.push(...f);
      out.alarms.push(...a);
    },
    onCall: (c) => out.calls.push(c),
    onError: () => undefined,
    ...(now === undefined ? {} : { now }),
  });
  for (const t of runs) out.dp.consider(t, runChecks(t, CHECKS), []);
  await out.dp.drain();
  await out.dp.close();
  return out;
}

/** The judged observation's values (JSON in the finding schema). */
export const valuesOf = (f: Finding) => (f.observation as unknown as { values: Record<string, unknown> }).values;
export const recommendationOf = (f: Finding) => valuesOf(f).recommendation as { action: string; reason: string; route: string | null };
