/**
 * `trajwatch serve` under a fixed load, its CPU split by thread (main, V8 helpers, fs pool), with
 * optional node flags: for telling garbage collection and compilation apart from the pipeline.
 *
 * Run: node bench/serve-threads.ts [synthetic|trail] [copies] [node flags...]
 */
import { httpSpanCount, syntheticHttpDataset, trailHttpDataset } from './datasets.ts';
import { processTreeCpuSeconds, runLoad, threadCpuSeconds } from './http-load.ts';
import { startTrajwatch, trajwatchBenchConfig } from './peers.ts';

const [which = 'trail', copiesArg = '10', ...nodeArgs] = process.argv.slice(2);
const copies = Number(copiesArg);
const data = which === 'trail' ? trailHttpDataset(copies, 1) : syntheticHttpDataset(500, copies * 40, 1);
const warmup = which === 'trail' ? trailHttpDataset(2, 100) : syntheticHttpDataset(500, 40, 500_000);
const server = await startTrajwatch(trajwatchBenchConfig(), nodeArgs);
try {
  const common = { url: server.url, concurrency: 4, maxSeconds: 120 };
  const warm = await runLoad({ ...common, bodies: warmup.bodies, spanCounts: warmup.spanCounts, maxRequests: warmup.bodies.length });
  await server.settle(60_000, warm.acceptedSpans);
  const cpuStart = processTreeCpuSeconds(server.pid);
  const threadsStart = threadCpuSeconds(server.pid);
  const load = await runLoad({ ...common, bodies: data.bodies, spanCounts: data.spanCounts, maxRequests: data.bodies.length });
  await server.settle(60_000, warm.acceptedSpans + load.acceptedSpans);
  const cpu = processTreeCpuSeconds(server.pid) - cpuStart;
  const threads = [...threadCpuSeconds(server.pid)].map(([name, s]) => `${name} ${(s - (threadsStart.get(name) ?? 0)).toFixed(2)}`);
  console.log(
    `${which} ×${copies} ${nodeArgs.join(' ')}: ${load.acceptedSpans}/${httpSpanCount(data)} spans, ${(load.acceptedSpans / cpu).toFixed(0)} spans/CPU-s; CPU-s by thread: ${threads.join(', ')}`,
  );
} finally {
  await server.stop();
}
