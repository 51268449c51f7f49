/**
 * A fixed load on a `trajwatch serve` started with `node --cpu-prof`, for profiling serve as a
 * whole (HTTP, write-ahead log, pipeline, sinks, metrics); see docs/performance.md.
 *
 * Prints the server's CPU by thread (main, V8 helpers, fs thread pool) as well.
 *
 * Run: node bench/profile-serve.ts [synthetic|trail] [profile dir]
 * Then: node bench/profile-summary.ts <dir>/*.cpuprofile 40
 */
import { httpSpanCount, syntheticHttpDataset, trailHttpDataset } from './datasets.ts';
import { processTreeCpuSeconds, runLoad, threadCpuSeconds } from './http-load.ts';
import { startTrajwatch, trajwatchBenchConfig } from './peers.ts';

const which = process.argv[2] ?? 'synthetic';
const dir = process.argv[3] ?? '/tmp/prof-serve';
const data = which === 'trail' ? trailHttpDataset(20) : syntheticHttpDataset(500, 400);
const server = await startTrajwatch(trajwatchBenchConfig(), ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
try {
  const cpuStart = processTreeCpuSeconds(server.pid);
  const threadsStart = threadCpuSeconds(server.pid);
  const load = await runLoad({ url: server.url, bodies: data.bodies, spanCounts: data.spanCounts, concurrency: 4, maxRequests: data.bodies.length, maxSeconds: 120 });
  await server.settle(60_000, load.acceptedSpans);
  const cpu = processTreeCpuSeconds(server.pid) - cpuStart;
  for (const [name, seconds] of threadCpuSeconds(server.pid)) {
    const used = seconds - (threadsStart.get(name) ?? 0);
    if (used >= 0.01) console.log(`  ${name}: ${used.toFixed(2)} CPU-s`);
  }
  console.log(`${which}: ${load.acceptedSpans} of ${httpSpanCount(data)} spans accepted, ${(load.acceptedSpans / cpu).toFixed(0)} spans/CPU-s (server, profiler on)`);
} finally {
  await server.stop();
}
console.log(`profile in ${dir}`);
