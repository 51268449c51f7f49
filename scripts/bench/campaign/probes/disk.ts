import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fillDisk, mountTmpfs, unmountTmpfs } from '../../../../test/helpers/tmpfs.ts';
import { metricValue } from '../../../../test/reliability/agent-run.ts';
import { count, drained, mib } from '../accounting.ts';
import { closeGrpcClients, newTally, openLoop, traceIdOf, type Tally } from '../load.ts';
import type { Probe } from '../probe.ts';
import { rssBytes, sleep, startCampaignServe } from '../serve-process.ts';

/** A content event (OTLP/JSON log record) for trace 0 of request `n`: logs load beside the traces. */
async function sendLog(url: string, prefix: number, n: number, tally: Tally): Promise<void> {
  const body = {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'campaign' } }] },
        scopeLogs: [
          {
            scope: { name: 'campaign' },
            logRecords: [
              {
                timeUnixNano: '1760000000000000000',
                traceId: traceIdOf(prefix, n, 0),
                eventName: 'gen_ai.user.message',
                body: { stringValue: 'x'.repeat(2_000) },
              },
            ],
          },
        ],
      },
    ],
  };
  try {
    const res = await fetch(`${url}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    await res.arrayBuffer();
    tally.statuses[`logs-${res.status}`] = (tally.statuses[`logs-${res.status}`] ?? 0) + 1;
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    tally.networkErrors[`logs:${code}`] = (tally.networkErrors[`logs:${code}`] ?? 0) + 1;
  }
}

/**
 * The data directory on a 20 MiB tmpfs under traces and logs: filled to ENOSPC while the load
 * runs, then freed. serve must refuse with a retry hint while full, and after: answer /healthz,
 * accept again, keep its RSS bounded, lose nothing it acknowledged.
 */
export const disk: Probe = async ({ seconds }) => {
  const mountPoint = mountTmpfs('trajwatch-campaign-disk-', '20m');
  const prefix = 0x0f0f0003;
  const config = {
    assembler: { quietPeriodMs: 300 },
    // Retention sized to the 20 MiB disk, as an operator would (17 MiB in all): only the filler
    // fills it, and freeing the filler frees the disk.
    receiver: { wal: { maxBytes: 4 * 1024 * 1024, segmentBytes: 256 * 1024 } },
    sinks: {
      retention: {
        trajectories: { maxBytes: 8 * 1024 * 1024, segmentBytes: 1024 * 1024 },
        findings: { maxBytes: 2 * 1024 * 1024, segmentBytes: 256 * 1024 },
        alarms: { maxBytes: 1024 * 1024, segmentBytes: 256 * 1024 },
      },
    },
    revisionMemory: { maxBytes: 2 * 1024 * 1024, segmentBytes: 256 * 1024 },
  };
  const serve = await startCampaignServe({ config, dataDir: mountPoint });
  try {
    const phase = async (label: string, secs: number, first: number) => {
      const tally = newTally();
      let logN = first;
      const logs = setInterval(() => void sendLog(serve.url, prefix, logN++, tally), 50);
      const { next } = await openLoop(serve, prefix, first, 20, secs, tally);
      clearInterval(logs);
      const healthy = await serve.answers(5_000);
      return { label, tally, next, healthy, rss: rssBytes(serve.child.pid!) };
    };
    const before = await phase('before', 3, 1);
    fillDisk(mountPoint);
    const full = await phase('full', Math.max(5, seconds / 4), before.next);
    rmSync(join(mountPoint, 'filler'), { force: true });
    await sleep(1_000);
    const after = await phase('freed', Math.max(10, seconds / 2), full.next);
    const alive = serve.child.exitCode === null && serve.child.signalCode === null;
    const healthyAtEnd = await serve.healthy(5_000);
    const isDrained = alive && (await drained(serve));
    const metrics = alive ? await serve.metrics().catch(() => '') : '';
    const received = metricValue(metrics, 'trajwatch_spans_received_total');
    const steps = metricValue(metrics, 'trajwatch_trajectory_steps_sum');
    const acked = before.tally.ackedSpans + full.tally.ackedSpans + after.tally.ackedSpans;
    const peak = serve.peakRssBytes();
    const exit = await serve.stop();
    const describe = (p: typeof before) =>
      `${count(p.tally.ackedSpans)} acknowledged, ${count(p.tally.refusedSpans)} refused (${p.tally.refusedWithoutHint} without a retry hint), logs ${JSON.stringify(p.tally.statuses)}; /healthz ${p.healthy ? 'answered' : 'did not answer'}; RSS ${mib(p.rss)}`;
    return {
      name: 'disk',
      setup:
        'the data directory on a 20 MiB tmpfs, 20 trace requests/s and 20 log requests/s; 3 s with room, then the disk filled to ENOSPC while the load goes on, then the filler deleted',
      rows: [
        ['with room', describe(before)],
        ['disk full', describe(full)],
        ['after space returned', describe(after)],
        ['acknowledged = `trajwatch_spans_received_total` = steps of closed trajectories', `${count(acked)} = ${count(received)} = ${count(steps)}`],
        ['peak RSS over the probe', mib(peak)],
        [
          'serve still running at the end',
          alive
            ? 'yes'
            : `no: ${serve
                .output()
                .split('\n')
                .filter((l) => l !== '')
                .slice(-2)
                .join(' / ')
                .slice(0, 300)}`,
        ],
        [
          'SIGTERM',
          `exit ${exit.code} in ${exit.ms} ms${
            exit.code === 0
              ? ''
              : `: ${serve
                  .output()
                  .split('\n')
                  .filter((l) => l !== '')
                  .slice(-3)
                  .join(' / ')
                  .slice(0, 600)}`
          }`,
        ],
      ],
      checks: [
        { what: 'serve survives the full disk and its recovery', ok: alive },
        { what: 'refusals while full carry a retry hint', ok: full.tally.refusedWithoutHint === 0 },
        { what: '/healthz answers while full and after', ok: full.healthy && after.healthy },
        { what: 'requests are acknowledged again after space returned', ok: after.tally.ackedSpans > 0 },
        { what: '/healthz says healthy (200) once the load is worked off', ok: healthyAtEnd },
        { what: 'peak RSS under 512 MiB', ok: peak < 512 * 1024 * 1024 },
        { what: 'every trajectory closed', ok: isDrained },
        { what: 'acknowledged = received = processed', ok: acked === received && received === steps },
        { what: 'SIGTERM exits 0', ok: exit.code === 0 },
      ],
    };
  } finally {
    closeGrpcClients();
    await serve.stop();
    unmountTmpfs(mountPoint);
  }
};
