/**
 * SIGTERM with many open trajectories: shutdown's work is bounded by construction — what is
 * closed is flushed, what is still open is left to the write-ahead log — so serve exits 0
 * within its configured bound however many are open, and a restart replays them all.
 */
import { describe, expect, it } from 'vitest';
import { startServe } from '../helpers/serve.ts';
import { metricValue } from './agent-run.ts';

const TRACES = 100_000;
const PER_REQUEST = 1_000;
const SHUTDOWN_TIMEOUT_MS = 10_000;

/** `count` traces of one tool span each, whose parent (the root) never arrives: all stay open. */
function openTraces(first: number, count: number): string {
  const spans = [];
  for (let i = first; i < first + count; i++) {
    const hex = i.toString(16).padStart(12, '0');
    spans.push({
      traceId: `5b00${hex}0000000000000000`,
      spanId: `1${hex}000`,
      parentSpanId: `2${hex}000`,
      name: 'execute_tool t',
      startTimeUnixNano: '1760000000000000000',
      endTimeUnixNano: '1760000000001000000',
      attributes: [{ key: 'gen_ai.tool.name', value: { stringValue: 't' } }],
    });
  }
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 's' }, spans }] }] });
}

async function openGauge(url: string): Promise<number> {
  return metricValue(await (await fetch(`${url}/metrics`)).text(), 'trajwatch_trajectories_open');
}

describe('SIGTERM with 100,000 open trajectories', () => {
  it('exits 0 within the configured bound, and a restart on the same data directory replays every one of them from the WAL', async () => {
    const config = {
      assembler: { quietPeriodMs: 600_000, idleTimeoutMs: 600_000, maxOpenTrajectories: 200_000, maxBufferedBytes: 1024 * 1024 * 1024 },
      shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
    };
    const first = await startServe(config);
    for (let sent = 0; sent < TRACES; sent += PER_REQUEST) {
      const res = await fetch(`${first.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: openTraces(sent, PER_REQUEST),
      });
      expect(res.status, await res.text()).toBe(200);
    }
    expect(await openGauge(first.url)).toBe(TRACES);

    const stoppedAt = performance.now();
    const code = await first.stop();
    const stopMs = performance.now() - stoppedAt;
    console.log(`shutdown with ${TRACES} open trajectories: exit ${code} after ${stopMs.toFixed(0)} ms (bound ${SHUTDOWN_TIMEOUT_MS} ms)`);
    expect(code, first.output().slice(-2000)).toBe(0);
    expect(stopMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS);

    const second = await startServe(config, ['--data-dir', first.dataDir]);
    try {
      expect(second.output()).toMatch(new RegExp(`replayed ${TRACES / PER_REQUEST} request\\(s\\) from the write-ahead log`));
      expect(await openGauge(second.url)).toBe(TRACES);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 240_000);
});
