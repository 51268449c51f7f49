/**
 * A full disk, then freed, under mixed traces + logs load: serve refuses while full and then
 * recovers — `/healthz` keeps answering, memory stays bounded, new requests are acknowledged,
 * and nothing acknowledged is lost. A real 20 MiB tmpfs as the data directory (root here).
 */
import { readdirSync, readFileSync, readlinkSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillDisk, mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.ts';
import { startServe, type ServeProcess } from '../helpers/serve.ts';
import { agentRunRequest, metricValue } from './agent-run.ts';

let mountPoint: string;
beforeAll(() => {
  mountPoint = mountTmpfs('trajwatch-full20-', '20m');
});
afterAll(() => unmountTmpfs(mountPoint));

const fill = (dir: string): string => fillDisk(dir, 64 * 1024);

/** Files serve holds open that are already deleted (their space is not free until closed). */
function deletedOpenFiles(pid: number): string[] {
  const out: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.endsWith(' (deleted)')) out.push(target);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

function usedMiB(dir: string): number {
  const s = statfsSync(dir);
  return ((s.blocks - s.bfree) * s.bsize) / 1024 / 1024;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? NaN : Number(m[1]) / 1024;
}

/** A log record for the run's tool span (a content event), so logs are joined and written too. */
function logsRequest(traceId: string): unknown {
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'reliability-agent' } }] },
        scopeLogs: [
          {
            scope: { name: 'agent' },
            logRecords: [
              {
                timeUnixNano: '1760000000035000000',
                traceId,
                spanId: `${traceId.slice(0, 14)}03`,
                eventName: 'gen_ai.tool.message',
                body: { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'x'.repeat(512) } }] } },
              },
            ],
          },
        ],
      },
    ],
  };
}

/** Bounded: a serve that stopped answering gives status 0 instead of a hung test. */
const REQUEST_TIMEOUT_MS = 3_000;

async function postLogs(url: string, body: unknown): Promise<number> {
  try {
    const res = await fetch(`${url}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    await res.text();
    return res.status;
  } catch {
    return 0;
  }
}

async function postTraces(url: string, body: unknown): Promise<{ status: number; headers: Headers; text: string }> {
  try {
    const res = await fetch(`${url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  } catch (err) {
    return { status: 0, headers: new Headers(), text: String(err) };
  }
}

/** /healthz answered within `timeoutMs`. */
async function healthy(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.text();
    return res.status === 200 || res.status === 503;
  } catch {
    return false;
  }
}

/** The trajectory keys in every trajectories segment (active and rotated), waiting (bounded) for `expected`. */
async function waitForTrajectories(dir: string, expected: readonly string[], timeoutMs: number): Promise<Set<string>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const keys = new Set<string>();
    for (const name of readdirSync(dir).filter((n) => /^trajectories.*\.jsonl$/.test(n))) {
      for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
        if (line !== '') keys.add((JSON.parse(line) as { key: string }).key);
      }
    }
    if (expected.every((k) => keys.has(k)) || Date.now() > deadline) return keys;
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Load {
  acknowledged: string[];
  statuses: Map<number, number>;
  retryAfter: Set<string>;
  /** Each refusal's reason (the answer's text), counted. */
  reasons: Map<string, number>;
}

/** Sends runs (traces, then their logs) from `workers` clients until `until()` says stop. */
async function load(serve: ServeProcess, prefix: string, until: () => boolean, workers = 3): Promise<Load> {
  const out: Load = { acknowledged: [], statuses: new Map(), retryAfter: new Set(), reasons: new Map() };
  let n = 0;
  const worker = async () => {
    while (!until()) {
      const traceId = `${prefix}${(n++).toString(16).padStart(32 - prefix.length, '0')}`;
      const res = await postTraces(serve.url, agentRunRequest({ traceId }));
      out.statuses.set(res.status, (out.statuses.get(res.status) ?? 0) + 1);
      if (res.status === 200) out.acknowledged.push(traceId);
      else if (res.status === 503) {
        out.retryAfter.add(res.headers.get('retry-after') ?? 'none');
        const reason = /\(([^)]*)\)/.exec(res.text)?.[1] ?? res.text;
        out.reasons.set(reason, (out.reasons.get(reason) ?? 0) + 1);
      }
      const logStatus = await postLogs(serve.url, logsRequest(traceId)).catch(() => 0);
      out.statuses.set(logStatus, (out.statuses.get(logStatus) ?? 0) + 1);
      // Paced, so serve's own files stay within their retention for the whole test (no deletions).
      await new Promise((r) => setTimeout(r, res.status === 200 ? 10 : 20));
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return out;
}

const timeUp = (ms: number) => {
  const end = Date.now() + ms;
  return () => Date.now() > end;
};

describe('disk full under load, then freed', () => {
  it('refuses with 503 + Retry-After while full; once freed, /healthz answers, RSS stays bounded, new requests are acknowledged and nothing acknowledged is lost', async () => {
    // Retention sized to the 20 MiB disk, as an operator would: serve's own files stay well
    // under it, so only the filler makes the disk full and freeing it frees the disk.
    const KiB = 1024;
    const config = {
      assembler: { quietPeriodMs: 100 },
      receiver: { wal: { maxBytes: 4096 * KiB, segmentBytes: 256 * KiB } },
      sinks: {
        retention: {
          trajectories: { maxBytes: 8192 * KiB, segmentBytes: 1024 * KiB },
          findings: { maxBytes: 2048 * KiB, segmentBytes: 256 * KiB },
          alarms: { maxBytes: 1024 * KiB, segmentBytes: 256 * KiB },
        },
      },
    };
    const serve = await startServe(config, ['--data-dir', mountPoint]);
    const pid = serve.child.pid!;
    let failure: unknown;
    let maxRss = 0;
    const sampler = setInterval(() => {
      if (serve.child.exitCode === null) maxRss = Math.max(maxRss, rssMiB(pid));
    }, 100);
    try {
      const before = await load(serve, 'df00', timeUp(1_500));
      expect(before.statuses.get(200)).toBeGreaterThan(0);
      const baselineRss = rssMiB(pid);

      // Several fill/free cycles: each failing write grows a backoff, and the race between a
      // retry timer and a recovering flush gets more than one chance to show.
      const acknowledged = [...before.acknowledged];
      let unanswered = 0;
      for (let cycle = 0; cycle < 3; cycle++) {
        const filler = fill(mountPoint);
        const full = await load(serve, `df1${cycle}`, timeUp(2_500));
        expect(full.statuses.get(503) ?? 0, JSON.stringify([...full.statuses])).toBeGreaterThan(0);
        expect([...full.retryAfter]).not.toContain('none');
        acknowledged.push(...full.acknowledged);

        rmSync(filler);
        // Recovery under continued load: /healthz must keep answering throughout.
        const probing = (async () => {
          const stop = timeUp(4_000);
          while (!stop()) {
            if (!(await healthy(serve.url))) unanswered++;
            await new Promise((r) => setTimeout(r, 250));
          }
        })();
        const after = await load(serve, `df2${cycle}`, timeUp(4_000));
        await probing;
        expect(unanswered, `cycle ${cycle}: ${serve.output().slice(-1500)}`).toBe(0);
        expect(after.acknowledged.length, `cycle ${cycle}: ${JSON.stringify([...after.statuses])} ${serve.output().slice(-3000)}`).toBeGreaterThan(0);
        acknowledged.push(...after.acknowledged);
        console.log(
          `disk-full cycle ${cycle}: used ${usedMiB(mountPoint).toFixed(1)} MiB, deleted-but-open ${JSON.stringify(deletedOpenFiles(pid))}; full ${JSON.stringify([...full.statuses])} ${JSON.stringify([...full.reasons])} after ${JSON.stringify([...after.statuses])} ${JSON.stringify([...after.reasons])}`,
        );
      }
      // A request after the load is acknowledged (the writers are not stuck): retried as an
      // exporter would (for up to a minute) while serve works off the load's backlog and a
      // writer waits out its backoff (at most 5 s) — a 503 then is backpressure; a writer that
      // never recovers keeps answering 503 and fails here, naming its reason.
      let last = await postTraces(serve.url, agentRunRequest({ traceId: 'df03000000000000000000000000ffff' }));
      for (let attempt = 0; attempt < 240 && last.status === 503; attempt++) {
        await new Promise((r) => setTimeout(r, 250));
        last = await postTraces(serve.url, agentRunRequest({ traceId: 'df03000000000000000000000000ffff' }));
      }
      expect(last.status, `${last.text} ${serve.output().slice(-3000)}`).toBe(200);

      acknowledged.push('df03000000000000000000000000ffff');
      const keys = await waitForTrajectories(mountPoint, acknowledged, 30_000);
      expect(acknowledged.filter((k) => !keys.has(k))).toEqual([]);
      const metrics = await (await fetch(`${serve.url}/metrics`)).text();
      expect(metricValue(metrics, 'trajwatch_local_log_retention_deleted_bytes_total', { log: 'trajectories' })).toBe(0);
      expect(await healthy(serve.url)).toBe(true);
      // Bounded: the incident report saw 165 MiB → 2 GiB+; allow a generous margin over the baseline.
      expect(maxRss, `baseline ${baselineRss.toFixed(0)} MiB`).toBeLessThan(baselineRss + 400);
      console.log(`disk-full recovery: baseline ${baselineRss.toFixed(0)} MiB, peak ${maxRss.toFixed(0)} MiB; acknowledged ${acknowledged.length}`);
    } catch (err) {
      failure = err;
      rmSync(join(mountPoint, 'filler'), { force: true });
    } finally {
      clearInterval(sampler);
    }
    const code = await Promise.race([serve.stop(), new Promise<string>((r) => setTimeout(() => r('no exit within 20 s'), 20_000))]);
    if (code === 'no exit within 20 s') serve.child.kill('SIGKILL');
    if (failure !== undefined) throw failure;
    expect(code, serve.output().slice(-2000)).toBe(0);
  }, 200_000);
});
