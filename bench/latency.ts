/**
 * Latency from a trajectory's close to its findings being durable in the local log (and
 * acknowledged by Kafka when a broker is given), under steady load at a fixed request rate
 * (half the measured maximum), via bench/latency-server.ts in its own process.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpDataset } from './datasets.ts';
import { percentile, runLoad, spawnServer, stopChild, waitForOutput } from './http-load.ts';
import { trajwatchBenchConfig } from './peers.ts';

export interface LatencyRun {
  ratePerSecond: number;
  spansPerSecond: number;
  trajectories: number;
  sinks: { name: string; count: number; p50: number; p99: number; max: number; failures: number }[];
  statuses: Record<number, number>;
}

/** Posts `d` at `ratePerSecond` requests/s to a fresh latency server; percentiles in ms. */
export async function measureLatency(
  warmup: HttpDataset,
  d: HttpDataset,
  ratePerSecond: number,
  kafkaBrokers: string[] | undefined,
): Promise<LatencyRun> {
  const dir = mkdtempSync(join(tmpdir(), 'trajwatch-latency-'));
  const configPath = join(dir, 'config.json');
  const resultPath = join(dir, 'result.json');
  const kafka = kafkaBrokers === undefined ? {} : { kafka: { brokers: kafkaBrokers, createTopics: true } };
  writeFileSync(configPath, JSON.stringify(trajwatchBenchConfig(kafka)));
  const child = spawnServer(process.execPath, [fileURLToPath(new URL('latency-server.ts', import.meta.url)), configPath, resultPath, join(dir, 'data')]);
  try {
    const match = await waitForOutput(child, /listening on (http:\S+)/, 30_000);
    const common = { url: match[1]!, concurrency: 8, maxSeconds: 120, ratePerSecond };
    await runLoad({ ...common, bodies: warmup.bodies, spanCounts: warmup.spanCounts, maxRequests: warmup.bodies.length });
    await new Promise((r) => setTimeout(r, 1_500)); // the warm-up's trajectories close and are written
    child.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 100));
    const load = await runLoad({
      ...common,
      bodies: d.bodies,
      spanCounts: d.spanCounts,
      maxRequests: d.bodies.length,
    });
    // Let everything sent close (quiet period 500 ms, ticks of 100 ms) and become durable.
    await new Promise((r) => setTimeout(r, 2_500));
    await stopChild(child, 15_000);
    const result = JSON.parse(readFileSync(resultPath, 'utf8')) as {
      trajectories: number;
      sinks: { name: string; samplesMs: number[]; failures: number }[];
    };
    return {
      ratePerSecond,
      spansPerSecond: load.acceptedSpans / load.wallSeconds,
      trajectories: result.trajectories,
      statuses: load.byStatus,
      sinks: result.sinks.map((s) => {
        const sorted = s.samplesMs.sort((a, b) => a - b);
        return { name: s.name, count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN, failures: s.failures };
      }),
    };
  } finally {
    await stopChild(child);
  }
}
