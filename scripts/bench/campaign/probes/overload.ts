import { metricValue } from '../../../../test/reliability/agent-run.ts';
import { accountAcked, count, drained, mib } from '../accounting.ts';
import { capacity, closeGrpcClients, newTally, openLoop } from '../load.ts';
import type { Probe } from '../probe.ts';
import { rssBytes, startCampaignServe } from '../serve-process.ts';

/** Memory bounds small enough that overload reaches them within the probe. */
export const OVERLOAD_CONFIG = {
  assembler: { maxBufferedBytes: 64 * 1024 * 1024, maxRetainedBytes: 32 * 1024 * 1024, quietPeriodMs: 500, idleTimeoutMs: 5_000 },
  sinks: { maxPendingBytes: 16 * 1024 * 1024 },
};

/** `receiver.maxInflightBytes`' default: the config above leaves it as shipped. */
const MAX_INFLIGHT_BYTES = 256 * 1024 * 1024;
/**
 * Heap per encoded byte the assembler holds, taken as 4 (docs/operations.md, "Peak RSS": an
 * upper guess, not established); the probe prints the factor its own peak implies.
 */
const ASSEMBLER_FACTOR = 4;

/** 4× capacity for `seconds`, HTTP protobuf, HTTP JSON and gRPC gzip in turn. */
export const overload: Probe = async ({ seconds }) => {
  const serve = await startCampaignServe({ config: OVERLOAD_CONFIG });
  const prefix = 0x0f0f0001;
  try {
    await new Promise((r) => setTimeout(r, 1_000));
    const idle = rssBytes(serve.child.pid!);
    const held = OVERLOAD_CONFIG.assembler.maxBufferedBytes + OVERLOAD_CONFIG.assembler.maxRetainedBytes;
    const formula = idle + 2.5 * MAX_INFLIGHT_BYTES + ASSEMBLER_FACTOR * held;
    const cap = await capacity(serve, prefix, 1, 5);
    const tally = newTally();
    const rate = Math.max(1, Math.round((4 * cap.spansPerSecond) / 64));
    const { next, skipped } = await openLoop(serve, prefix, cap.next, rate, seconds, tally);
    const healthyAfter = await serve.healthy(5_000);
    const isDrained = await drained(serve);
    const recovery = newTally();
    await openLoop(serve, prefix, next, Math.max(1, Math.round(cap.spansPerSecond / 2 / 64)), 5, recovery);
    await drained(serve);
    const metrics = await serve.metrics();
    const received = metricValue(metrics, 'trajwatch_spans_received_total');
    const steps = metricValue(metrics, 'trajwatch_trajectory_steps_sum');
    const ackedAll = cap.tally.ackedSpans + tally.ackedSpans + recovery.ackedSpans;
    const acked = [...cap.tally.ackedRequests, ...tally.ackedRequests, ...recovery.ackedRequests];
    const accounting = await accountAcked(serve.dataDir, prefix, acked);
    const peak = serve.peakRssBytes();
    const exit = await serve.stop();
    const network =
      Object.entries(tally.networkErrors)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none';
    return {
      name: 'overload',
      setup: `capacity measured by 8 closed-loop senders for 5 s, then an open loop at 4× capacity for ${seconds} s over OTLP/HTTP protobuf, OTLP/HTTP JSON and OTLP/gRPC gzip in turn, then half capacity for 5 s`,
      rows: [
        ['capacity (acknowledged, closed loop)', `${count(cap.spansPerSecond)} spans/s`],
        ['offered in overload', `${count(tally.sentSpans)} spans in ${count(tally.sentSpans / 64)} requests (${count(skipped)} not offered: 1,024 in flight)`],
        [
          'acknowledged / refused with a status',
          `${count(tally.ackedSpans)} / ${count(tally.refusedSpans)} spans; refusals without a retry hint: ${tally.refusedWithoutHint}`,
        ],
        ['refusals and other answers by status', JSON.stringify(tally.statuses)],
        ['no answer (reset, timeout)', network],
        [
          'acknowledged (all phases) = `trajwatch_spans_received_total` = steps of closed trajectories',
          `${count(ackedAll)} = ${count(received)} = ${count(steps)}`,
        ],
        [
          'acknowledged traces found whole in the trajectory log',
          `${count(accounting.ackedTraces - accounting.missingTraces)} / ${count(accounting.ackedTraces)}`,
        ],
        ['recovery at half capacity', `${count(recovery.ackedSpans)} acknowledged, ${count(recovery.refusedSpans)} refused`],
        ['peak RSS', mib(peak)],
        [
          'stated bound: R0 + 2.5 × maxInflightBytes + 4 × (maxBufferedBytes + maxRetainedBytes)',
          `${mib(idle)} + 2.5 × ${mib(MAX_INFLIGHT_BYTES)} + 4 × ${mib(held)} = ${mib(formula)}; the peak implies a factor of ${Math.max(0, (peak - idle - 2.5 * MAX_INFLIGHT_BYTES) / held).toFixed(2)} or less for the assembler's share`,
        ],
        ['SIGTERM', `exit ${exit.code} in ${exit.ms} ms`],
      ],
      checks: [
        { what: 'every refusal carries a retry hint', ok: tally.refusedWithoutHint === 0 && recovery.refusedWithoutHint === 0 },
        { what: 'every request got an answer (no reset)', ok: Object.keys(tally.networkErrors).length === 0 },
        { what: '/healthz answered right after overload', ok: healthyAfter },
        { what: 'every trajectory closed', ok: isDrained },
        { what: 'acknowledged = received = processed', ok: ackedAll === received && received === steps },
        { what: 'every acknowledged trace is in the trajectory log', ok: accounting.missingTraces === 0 },
        { what: 'recovery acknowledged whole', ok: recovery.refusedSpans === 0 && recovery.ackedSpans > 0 },
        { what: 'SIGTERM exits 0', ok: exit.code === 0 },
        { what: 'peak RSS within the stated formula', ok: peak <= formula },
      ],
    };
  } finally {
    closeGrpcClients();
    await serve.stop();
  }
};
