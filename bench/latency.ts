/**
 * Latency from a trajectory's close to its findings being durable in the local log (and
 * acknowledged by Kafka when a broker is given), under steady load at a fixed request rate
 * (half the measured maximum), via bench/latency-server.ts in its own process.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { syntheticHttpDataset } from './datasets.ts';
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
  nodeArgs: readonly string[] = [],
): Promise<LatencyRun> {
  const dir = mkdtempSync(join(tmpdir(), 'trajwatch-latency-'));
  const configPath = join(dir, 'config.json');
  const resultPath = join(dir, 'result.json');
  const kafka = kafkaBrokers === undefined ? {} : { sinks: { kafka: { brokers: kafkaBrokers, createTopics: true } } };
  writeFileSync(configPath, JSON.stringify(trajwatchBenchConfig(kafka)));
  const child = spawnServer(process.execPath, [
    ...nodeArgs,
    fileURLToPath(new URL('latency-server.ts', import.meta.url)),
    configPath,
    resultPath,
    join(dir, 'data'),
  ]);
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
        return {
          name: s.name,
          count: sorted.length,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          max: sorted.at(-1) ?? Number.NaN,
          failures: s.failures,
        };
      }),
    };
  } finally {
    await stopChild(child);
  }
}

// Standalone: node bench/latency.ts [requests/s = 30] [seconds = 10] [brokers = 127.0.0.1:19092 | none] [node flags...]
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rate = Number(process.argv[2] ?? 30);
  const seconds = Number(process.argv[3] ?? 10);
  const brokers = process.argv[4] === 'none' ? undefined : (process.argv[4] ?? '127.0.0.1:19092').split(',');
  const run = await measureLatency(
    syntheticHttpDataset(500, rate, 2_000_000),
    syntheticHttpDataset(500, rate * seconds, 1_000_000),
    rate,
    brokers,
    process.argv.slice(5),
  );
  console.log(`${rate} requests/s × 500 spans for ${seconds} s; ${run.trajectories} trajectories; answers ${JSON.stringify(run.statuses)}`);
  for (const s of run.sinks) {
    console.log(`${s.name.padEnd(10)} n=${s.count} p50=${s.p50.toFixed(1)} p99=${s.p99.toFixed(1)} max=${s.max.toFixed(1)} ms failures=${s.failures}`);
  }
}
