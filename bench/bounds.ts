/**
 * The spine's bounds under load: a `trajwatch serve` whose buffer bound is small and whose
 * trajectories never close during the run is sent several times its bound; the excess must be
 * answered 503 and its RSS must stay flat once the bound is reached.
 */
import type { HttpDataset } from './datasets.ts';
import { processTreeRssBytes, runLoad } from './http-load.ts';
import { startTrajwatch } from './peers.ts';

export interface BoundsRun {
  maxBufferedBytes: number;
  sentBytes: number;
  byStatus: Record<number, number>;
  acceptedBytes: number;
  /** RSS when the first 503 was answered, and the highest RSS after it. */
  rssAtFirstRefusalBytes: number;
  rssMaxAfterBytes: number;
  rssMaxBytes: number;
}

export async function measureBounds(d: HttpDataset, maxBufferedBytes: number): Promise<BoundsRun> {
  const server = await startTrajwatch({
    assembler: { quietPeriodMs: 600_000, idleTimeoutMs: 600_000, maxOpenTrajectories: 1_000_000, maxBufferedBytes },
  });
  try {
    let rssAtFirstRefusal = 0;
    let rssMaxAfter = 0;
    let rssMax = 0;
    const sample = setInterval(() => {
      const rss = processTreeRssBytes(server.pid);
      rssMax = Math.max(rssMax, rss);
      if (rssAtFirstRefusal > 0) rssMaxAfter = Math.max(rssMaxAfter, rss);
    }, 50);
    let acceptedBytes = 0;
    const load = await runLoad({
      url: server.url,
      bodies: d.bodies,
      spanCounts: d.spanCounts,
      concurrency: 4,
      maxRequests: d.bodies.length,
      maxSeconds: 60,
      onAnswer: (index, status) => {
        if (status === 200) acceptedBytes += d.bodies[index % d.bodies.length]!.byteLength;
        if (status === 503 && rssAtFirstRefusal === 0) rssAtFirstRefusal = processTreeRssBytes(server.pid);
        // Every answer after the first refusal is a sample too: the refusals come faster than the timer.
        else if (rssAtFirstRefusal > 0) rssMaxAfter = Math.max(rssMaxAfter, processTreeRssBytes(server.pid));
      },
    });
    clearInterval(sample);
    if (rssAtFirstRefusal > 0) rssMaxAfter = Math.max(rssMaxAfter, processTreeRssBytes(server.pid));
    return {
      maxBufferedBytes,
      sentBytes: d.bodies.reduce((sum, b) => sum + b.byteLength, 0),
      byStatus: load.byStatus,
      acceptedBytes,
      rssAtFirstRefusalBytes: rssAtFirstRefusal,
      rssMaxAfterBytes: rssMaxAfter,
      rssMaxBytes: rssMax,
    };
  } finally {
    await server.stop();
  }
}
