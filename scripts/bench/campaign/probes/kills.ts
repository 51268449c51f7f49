import { accountAcked, count, drained } from '../accounting.ts';
import { capacity, closeGrpcClients, newTally, openLoop, type Target } from '../load.ts';
import type { Probe } from '../probe.ts';
import { type CampaignServe, sleep, startCampaignServe } from '../serve-process.ts';

const KILLS = 10;

/**
 * 10 × SIGKILL under load, restarting on the same data directory each time. Segments are tiny
 * (WAL 64 KiB, local logs 16 KiB), so kills land mid segment roll as a matter of course.
 */
export const kills: Probe = async ({ seconds }) => {
  const config = {
    assembler: { quietPeriodMs: 300 },
    receiver: { wal: { segmentBytes: 64 * 1024 } },
    sinks: {
      retention: {
        trajectories: { segmentBytes: 16 * 1024, maxBytes: 1024 * 1024 * 1024 },
        findings: { segmentBytes: 16 * 1024, maxBytes: 1024 * 1024 * 1024 },
      },
    },
  };
  let serve: CampaignServe = await startCampaignServe({ config });
  const dataDir = serve.dataDir;
  const prefix = 0x0f0f0002;
  const tally = newTally();
  let restarts = 0;
  try {
    const cap = await capacity(serve, prefix, 1, 3);
    let current: Target = serve;
    const rate = Math.max(1, Math.round(cap.spansPerSecond / 2 / 64));
    const loop = openLoop(() => current, prefix, cap.next, rate, seconds, tally);
    const every = (seconds * 1000) / (KILLS + 1);
    for (let k = 0; k < KILLS; k++) {
      await sleep(every * (0.5 + Math.random()));
      await serve.kill9();
      serve = await startCampaignServe({ config, dataDir });
      restarts++;
      current = serve;
    }
    await loop;
    const isDrained = await drained(serve);
    const accounting = await accountAcked(dataDir, prefix, tally.ackedRequests);
    const exit = await serve.stop();
    const duplicates = accounting.trajectoryLines - (accounting.ackedTraces - accounting.missingTraces);
    return {
      name: 'kills',
      setup: `an open loop at half capacity for ${seconds} s over the three transports; ${KILLS} SIGKILLs at random moments, each followed by a restart on the same data directory (WAL segments 64 KiB, local log segments 16 KiB: kills land mid segment roll)`,
      rows: [
        ['kills / restarts', `${KILLS} / ${restarts}`],
        ['spans acknowledged', count(tally.ackedSpans)],
        ['requests without an answer (serve down)', count(Object.values(tally.networkErrors).reduce((a, b) => a + b, 0))],
        [
          'acknowledged traces found whole after the last restart',
          `${count(accounting.ackedTraces - accounting.missingTraces)} / ${count(accounting.ackedTraces)}`,
        ],
        ['trajectory lines beyond one per trace (replayed at least once, counted)', count(Math.max(0, duplicates))],
        ['SIGTERM after the last restart', `exit ${exit.code} in ${exit.ms} ms`],
      ],
      checks: [
        { what: 'every acknowledged trace is in the trajectory log', ok: accounting.missingTraces === 0 },
        { what: 'every trajectory closed', ok: isDrained },
        { what: 'SIGTERM exits 0', ok: exit.code === 0 },
      ],
    };
  } finally {
    closeGrpcClients();
    await serve.stop();
  }
};
