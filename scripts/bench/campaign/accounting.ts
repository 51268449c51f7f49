/** What the campaign checks after each probe: every acknowledged span is in some trajectory. */
import { join } from 'node:path';
import { readLogLines } from '../../../src/cli/local-log-files.ts';
import { metricValue } from '../../../test/reliability/agent-run.ts';
import { TRACES_PER_REQUEST, traceIdOf } from './load.ts';
import { type CampaignServe, sleep } from './serve-process.ts';

/** Waits (bounded) until serve holds no open trajectory. */
export async function drained(serve: CampaignServe, timeoutMs = 60_000): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    try {
      if (metricValue(await serve.metrics(), 'trajwatch_trajectories_open') === 0) return true;
    } catch {
      // busy: ask again
    }
    await sleep(200);
  }
  return false;
}

export interface Accounting {
  ackedTraces: number;
  /** Acknowledged traces with fewer than 8 distinct steps over all their revisions. */
  missingTraces: number;
  missingExamples: string[];
  /** Trajectory lines for the acknowledged traces (more than one per trace: replays, revisions). */
  trajectoryLines: number;
}

/** Reads the trajectory log of `dataDir` and checks each acknowledged request's traces in it. */
export async function accountAcked(dataDir: string, prefix: number, ackedRequests: readonly number[]): Promise<Accounting> {
  const steps = new Map<string, Set<string>>();
  let lines = 0;
  const want = new Set<string>();
  for (const n of ackedRequests) for (let t = 0; t < TRACES_PER_REQUEST; t++) want.add(traceIdOf(prefix, n, t));
  for (const line of await readLogLines(join(dataDir, 'trajectories.jsonl'))) {
    const row = JSON.parse(line) as { key: string; steps: { id: string }[] };
    if (!want.has(row.key)) continue;
    lines++;
    let set = steps.get(row.key);
    if (set === undefined) steps.set(row.key, (set = new Set()));
    for (const s of row.steps) set.add(s.id);
  }
  const missing = [...want].filter((k) => (steps.get(k)?.size ?? 0) < 8);
  return { ackedTraces: want.size, missingTraces: missing.length, missingExamples: missing.slice(0, 3), trajectoryLines: lines };
}

export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
export const count = (n: number) => n.toLocaleString('en-US');
