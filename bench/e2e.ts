/**
 * One end-to-end comparison, quicker than `npm run bench`: the chosen servers take turns on
 * the same bodies, `rounds` times, and each one's runs and median are printed. For a change's
 * before/after, `before=<checkout>` adds a `trajwatch serve` run from another working tree
 * (e.g. `git worktree add /tmp/before HEAD~1`, with node_modules linked).
 *
 * Run: node bench/e2e.ts [synthetic|trail] [rounds] [trajwatch,single-gc,collector,durable] [before=<dir>]
 */
import { httpSpanCount, syntheticHttpDataset, trailHttpDataset } from './datasets.ts';
import { fmt } from './measure.ts';
import {
  collectorPeer,
  durableCollectorPeer,
  measurePeer,
  type Peer,
  startTrajwatch,
  trajwatchBenchConfig,
  trajwatchPeer,
  trajwatchSingleThreadedGcPeer,
} from './peers.ts';

const [which = 'trail', roundsArg = '3', namesArg = 'trajwatch,collector,durable'] = process.argv.slice(2).filter((a) => !a.includes('='));
const before = process.argv.find((a) => a.startsWith('before='))?.slice('before='.length);
const known: Record<string, Peer> = {
  trajwatch: trajwatchPeer,
  'single-gc': trajwatchSingleThreadedGcPeer,
  collector: collectorPeer,
  durable: durableCollectorPeer,
};
const peers = namesArg.split(',').map((n) => {
  const peer = known[n];
  if (peer === undefined) throw new Error(`unknown server ${n}: one of ${Object.keys(known).join(', ')}`);
  return peer;
});
if (before !== undefined) {
  peers.unshift({ name: `trajwatch serve from ${before}`, unavailable: () => undefined, start: () => startTrajwatch(trajwatchBenchConfig(), [], before) });
}
const trail = which === 'trail';
const measured = trail ? trailHttpDataset(10, 1) : syntheticHttpDataset(500, 400, 1);
const warmup = trail ? trailHttpDataset(2, 100) : syntheticHttpDataset(500, 40, 500_000);
const rounds = Number(roundsArg);
const runs = new Map<Peer, number[]>();
for (let round = 0; round < rounds; round++) {
  for (const peer of peers) {
    const run = await measurePeer(peer, { warmup, measured, concurrency: 4, maxSeconds: 60, settleMs: 30_000 });
    if (typeof run === 'string') throw new Error(`${peer.name}: ${run}`);
    runs.set(peer, [...(runs.get(peer) ?? []), run.spansPerCpuSecond]);
    console.error(
      `${measured.name} round ${round + 1}: ${peer.name}: ${fmt(run.spansPerCpuSecond)} spans/CPU-s (${run.note}; CPU ${run.serverCpuSeconds.toFixed(2)} s, RSS ${(run.rssBytes / 2 ** 20).toFixed(0)} MB)`,
    );
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
console.log(`${measured.name}, ${httpSpanCount(measured)} spans, ${rounds} rounds`);
for (const [peer, xs] of runs) console.log(`  ${peer.name}: median ${fmt(median(xs))} spans/CPU-s (${xs.map(fmt).join(', ')})`);
