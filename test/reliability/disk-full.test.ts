import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillDisk, mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.ts';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { agentRunRequest, metricValue, postJson } from './agent-run.ts';

// A real full disk: a 1 MiB tmpfs as the data directory (the tests run as root here).
let mountPoint: string;
beforeAll(() => {
  mountPoint = mountTmpfs('trajwatch-full-', '1m');
});
afterAll(() => unmountTmpfs(mountPoint));

const fill = (dir: string): string => fillDisk(dir, 4096);

async function postUntil(
  url: string,
  status: number,
  traceIdPrefix: string,
  limit = 200,
): Promise<{ status: number; text: string; headers: Headers; sent: number }> {
  for (let i = 1; i <= limit; i++) {
    const res = await postJson(url, agentRunRequest({ traceId: `${traceIdPrefix}${i.toString(16).padStart(32 - traceIdPrefix.length, '0')}` }));
    if (res.status === status) return { ...res, sent: i };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never answered ${status}`);
}

describe('disk full under the data directory', () => {
  it('refuses new input with 503 + Retry-After instead of acknowledging it, then recovers and writes what it had acknowledged', async () => {
    const serve = await startServe({ assembler: { quietPeriodMs: 100 } }, ['--data-dir', mountPoint]);
    const trajectories = join(mountPoint, 'trajectories.jsonl');
    let failure: unknown;
    try {
      expect((await postJson(serve.url, agentRunRequest({ traceId: 'd15c0000000000000000000000000001' }))).status).toBe(200);
      await waitForLines(trajectories, (r) => r.length === 1);

      const filler = fill(mountPoint);
      // Spans accepted before the first failed write sit in memory; the first failed write turns admission off.
      const refused = await postUntil(serve.url, 503, 'd15c1');
      expect(refused.headers.get('retry-after')).toBe('2');
      // Whichever file hits the full disk first (the write-ahead log, trajectories or findings) turns admission off.
      expect(JSON.parse(refused.text)).toEqual({
        code: 14,
        message: expect.stringMatching(/^trajwatch is at its limit \((wal|trajectory-log|findings-log)-unwritable\); retry later$/),
      });
      // /healthz names the component that cannot write, with the reason input is refused with.
      const reason = /\(([a-z-]+)\)/.exec((JSON.parse(refused.text) as { message: string }).message)![1]!;
      const healthz = await fetch(`${serve.url}/healthz`);
      const health = (await healthz.json()) as { status: string; components: Record<string, string> };
      expect(healthz.status, JSON.stringify(health)).toBe(503);
      expect(health.status).toBe('unhealthy');
      expect(Object.values(health.components).filter((h) => h.endsWith('-unwritable'))).toContain(reason);
      // Zero or more requests were acknowledged before a write failed (a page of slack can still take a line).
      const acknowledged = refused.sent - 1;
      // Still refusing while the disk stays full: nothing further is acknowledged.
      for (let i = 0; i < 5; i++) {
        expect((await postJson(serve.url, agentRunRequest({ traceId: `d15c20000000000000000000000000a${i}` }))).status).toBe(503);
      }
      const metrics = await (await fetch(`${serve.url}/metrics`)).text();
      const unwritable =
        metricValue(metrics, 'trajwatch_otlp_requests_refused_total', { reason: 'trajectory-log-unwritable' }) +
        metricValue(metrics, 'trajwatch_otlp_requests_refused_total', { reason: 'findings-log-unwritable' }) +
        metricValue(metrics, 'trajwatch_otlp_requests_refused_total', { reason: 'wal-unwritable' });
      expect(
        unwritable,
        metrics
          .split('\n')
          .filter((l) => l.startsWith('trajwatch_otlp_requests_refused_total'))
          .join('\n'),
      ).toBeGreaterThanOrEqual(6);

      rmSync(filler);
      const recovered = await postUntil(serve.url, 200, 'd15c3');
      expect(recovered.status).toBe(200);
      // Every trajectory acknowledged before the refusals is written once space is back.
      const rows = await waitForLines<{ key: string }>(
        trajectories,
        (r) => r.filter((t) => t.key.startsWith('d15c1')).length === acknowledged && r.some((t) => t.key.startsWith('d15c3')),
        20_000,
      );
      expect(new Set(rows.map((t) => t.key)).size).toBe(rows.length);
      expect(rows.some((t) => t.key.startsWith('d15c2'))).toBe(false);
    } catch (err) {
      failure = err;
      rmSync(join(mountPoint, 'filler'), { force: true });
    }
    const code = await serve.stop();
    if (failure !== undefined) throw failure;
    // Shutdown right after recovery still delivers everything: exit 0.
    expect(code, serve.output()).toBe(0);
  });
});
