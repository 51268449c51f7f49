/**
 * Memory with many TRAIL-sized trajectories open in a real `trajwatch serve` (span WAL on):
 * copies of the TRAIL traces, fresh trace ids each, are posted until `count` are open, and the
 * serve process tree's RSS (from /proc), its heap (`nodejs_heap_size_used_bytes` on /metrics),
 * the WAL's bytes on disk and the open count (`trajwatch_trajectories_open`) are read.
 *
 * Two configurations: `room` (quiet period and idle timeout of 10 minutes, so nothing closes;
 * every admission bound and the WAL's `maxBytes` out of reach) measures the memory; `defaults`
 * (the shipped bounds, only the closing times lengthened) stops at the first refusal and reads
 * the open count at that moment. Both stop at `count`, at the first refusal or at the time
 * limit, and the server's data dir (gigabytes of WAL) is removed on the way out.
 *
 * Run: node bench/open-trajectories.ts [room|defaults|both] [count] [maxSeconds]
 * (TRAJWATCH_TRAIL_CORPUS=full for the 26 traces.) Prints one JSON object on stdout.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { trailHttpDataset } from './datasets.ts';
import { processTreeRssBytes, runLoad } from './http-load.ts';
import { startTrajwatch } from './peers.ts';

export type OpenConfig = 'room' | 'defaults';

export interface OpenTrajectoriesRun {
  config: OpenConfig;
  /** How many open trajectories were asked for. */
  target: number;
  corpus: string;
  /** `trajwatch_trajectories_open` when the run stopped. */
  open: number;
  postedBodies: number;
  postedBytes: number;
  /** Serve's process tree, at the end and the highest sampled. */
  rssBytes: number;
  rssMaxBytes: number;
  heapUsedBytes: number;
  walBytesOnDisk: number;
  /** The first refusal: its status, the open count read right after it and the refusal reasons counted by then. */
  firstRefusal?: { status: number; open: number; reasons: Record<string, number> };
  /** Why it stopped: the target reached, a refusal, the time limit, or serve gone (a connection failed: it ran out of memory, say). */
  stoppedBy: 'target' | 'refusal' | 'time' | 'serve-exited';
  seconds: number;
}

const TEN_MINUTES_MS = 600_000;

function serveConfig(config: OpenConfig, target: number): Record<string, unknown> {
  const neverCloses = { quietPeriodMs: TEN_MINUTES_MS, idleTimeoutMs: TEN_MINUTES_MS };
  if (config === 'defaults') return { assembler: neverCloses };
  const bytesOutOfReach = 64 * 2 ** 30; // far above 10,000 TRAIL-sized trajectories (~7 GB on the full corpus)
  return {
    assembler: { ...neverCloses, maxOpenTrajectories: 2 * target, maxBufferedBytes: bytesOutOfReach },
    receiver: { wal: { enabled: true, maxBytes: bytesOutOfReach } },
    sinks: { maxPendingBytes: bytesOutOfReach },
  };
}

interface Scrape {
  open: number;
  heapUsed: number;
  reasons: Record<string, number>;
}

/** Sums of the samples of each named series, and the refusal reasons, from one scrape; NaN figures when serve is gone. */
async function scrape(base: string): Promise<Scrape> {
  let text: string;
  try {
    text = await (await fetch(`${base}/metrics`)).text();
  } catch (error) {
    console.error(`open-trajectories: /metrics did not answer (${String(error)})`);
    return { open: Number.NaN, heapUsed: Number.NaN, reasons: {} };
  }
  let open = 0;
  let heapUsed = 0;
  const reasons: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('trajwatch_trajectories_open')) open += value;
    else if (line.startsWith('nodejs_heap_size_used_bytes')) heapUsed += value;
    else if (line.startsWith('trajwatch_otlp_requests_refused_total{')) {
      const reason = /reason="([^"]*)"/.exec(line)?.[1] ?? 'unknown';
      reasons[reason] = (reasons[reason] ?? 0) + value;
    }
  }
  return { open, heapUsed, reasons };
}

function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

/**
 * Posts TRAIL copies to a fresh `serve` until `target` trajectories are open, the first refusal,
 * or `maxSeconds`; one copy's bodies at a time, so the client never holds more than a few.
 */
export async function measureOpenTrajectories(config: OpenConfig, target: number, maxSeconds: number): Promise<OpenTrajectoriesRun> {
  const server = await startTrajwatch(serveConfig(config, target));
  const base = server.url.slice(0, -'/v1/traces'.length);
  // An interrupted run still removes the WAL it wrote (gigabytes).
  const onSignal = () => void server.stop().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const started = performance.now();
  let rssMax = 0;
  const sample = setInterval(() => {
    rssMax = Math.max(rssMax, processTreeRssBytes(server.pid));
  }, 500);
  try {
    let postedBodies = 0;
    let postedBytes = 0;
    let corpus = '';
    let firstRefusal: OpenTrajectoriesRun['firstRefusal'];
    let refusalScrape: Promise<void> | undefined;
    let serveExited = false;
    let stoppedBy: OpenTrajectoriesRun['stoppedBy'] = 'time';
    for (let copy = 0; ; copy++) {
      if ((performance.now() - started) / 1000 > maxSeconds) break;
      const data = trailHttpDataset(1, copy);
      corpus = data.name;
      // One body per trace, one trace per trajectory: never post more than the target asks.
      const bodies = data.bodies.slice(0, Math.max(0, target - postedBodies));
      const load = await runLoad({
        url: server.url,
        bodies,
        spanCounts: data.spanCounts,
        concurrency: 2,
        maxRequests: bodies.length,
        maxSeconds: Math.max(1, maxSeconds - (performance.now() - started) / 1000),
        onAnswer: (index, status) => {
          if (status >= 200 && status < 300) postedBytes += bodies[index]!.byteLength;
          // No answer at all (status 0) is not a refusal: serve is gone.
          else if (status === 0) serveExited = true;
          else if (refusalScrape === undefined) {
            // Read right away: the other request in flight may still change the count by one.
            refusalScrape = scrape(base).then((s) => {
              firstRefusal = { status, open: s.open, reasons: s.reasons };
            });
          }
        },
      });
      postedBodies += load.requests;
      if (serveExited) {
        stoppedBy = 'serve-exited';
        break;
      }
      if (refusalScrape !== undefined) {
        await refusalScrape;
        stoppedBy = 'refusal';
        break;
      }
      if (postedBodies >= target) {
        stoppedBy = 'target';
        break;
      }
    }
    const end = await scrape(base);
    const rss = processTreeRssBytes(server.pid);
    return {
      config,
      target,
      corpus,
      open: end.open,
      postedBodies,
      postedBytes,
      rssBytes: rss,
      rssMaxBytes: Math.max(rssMax, rss),
      heapUsedBytes: end.heapUsed,
      walBytesOnDisk: bytesUnder(join(server.dataDir, 'wal')),
      ...(firstRefusal === undefined ? {} : { firstRefusal }),
      stoppedBy,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    clearInterval(sample);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await server.stop();
  }
}

if (import.meta.main) {
  const [which = 'both', countArg = '10000', secondsArg = '900'] = process.argv.slice(2);
  const configs: OpenConfig[] = which === 'both' ? ['room', 'defaults'] : [which as OpenConfig];
  if (!configs.every((c) => c === 'room' || c === 'defaults')) throw new Error(`unknown config ${which}: room, defaults or both`);
  const runs: OpenTrajectoriesRun[] = [];
  for (const config of configs) runs.push(await measureOpenTrajectories(config, Number(countArg), Number(secondsArg)));
  process.stdout.write(`${JSON.stringify(runs)}\n`);
}
