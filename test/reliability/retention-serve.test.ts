import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SpanWal } from '../../src/ingest/wal/span-wal.ts';
import { collect } from '../helpers/collect.ts';
import { startServe } from '../helpers/serve.ts';
import { agentRunRequest, metricValue, postJson } from './agent-run.ts';

/*
 * Retention through a real `trajwatch serve`: 10x the configured retention of the local logs
 * goes through OTLP/HTTP while the Kafka findings sink's broker is unreachable. The data
 * directory stays under its bound, the outbox keeps every record it took (the input is
 * refused with 503 once it is full, nothing is deleted) and the unreleased write-ahead log
 * is all there after a SIGKILL.
 */

const KiB = 1024;
const LOGS = {
  trajectories: { maxBytes: 32 * KiB, segmentBytes: 4 * KiB },
  findings: { maxBytes: 32 * KiB, segmentBytes: 4 * KiB },
  alarms: { maxBytes: 16 * KiB, segmentBytes: 4 * KiB },
};
// Nothing is released or acknowledged while the broker is unreachable: the WAL holds every
// request and the outbox every record, so these bounds decide when input is refused.
const WAL = { maxBytes: 4096 * KiB, segmentBytes: 128 * KiB };
const OUTBOX = { maxOutboxBytes: 3072 * KiB, outboxSegmentBytes: 64 * KiB };
/** Small files beside the logs: the test's config.json, the outbox's ack log. */
const SMALL_FILES_BYTES = 16 * KiB;
/**
 * The rule: every local log's maxBytes (its segments are cut to segmentBytes, so it never
 * passes that), the WAL's and the outbox's bounds plus at most one segment each.
 */
const BOUND_BYTES =
  Object.values(LOGS).reduce((a, l) => a + l.maxBytes, 0) +
  WAL.maxBytes +
  WAL.segmentBytes +
  OUTBOX.maxOutboxBytes +
  OUTBOX.outboxSegmentBytes +
  SMALL_FILES_BYTES;

async function filesUnder(dir: string): Promise<{ path: string; size: number }[]> {
  const out: { path: string; size: number }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else {
      // A file renamed or deleted between the listing and the stat is no longer there.
      const s = await stat(path).catch(() => undefined);
      if (s !== undefined) out.push({ path, size: s.size });
    }
  }
  return out;
}

/** Bytes ever written to a rotated log: the active file's log-wide offset (the last closed name + size) plus its size. */
async function bytesWritten(dataDir: string, name: 'trajectories' | 'findings' | 'alarms'): Promise<number> {
  const names = (await readdir(dataDir)).filter((n) => new RegExp(`^${name}\\.\\d{16}\\.jsonl$`).test(n)).sort();
  const last = names.at(-1);
  const closedEnd = last === undefined ? 0 : Number(last.slice(name.length + 1, name.length + 17)) + (await stat(join(dataDir, last))).size;
  return closedEnd + (await stat(join(dataDir, `${name}.jsonl`)).catch(() => ({ size: 0 }))).size;
}

const traceId = (n: number) => `7e7e${n.toString(16).padStart(28, '0')}`;
const request = (from: number, runs: number) => ({
  resourceSpans: Array.from({ length: runs }, (_, i) => agentRunRequest({ traceId: traceId(from + i) }).resourceSpans).flat(),
});

describe('retention through serve', () => {
  it("writes 10x the local logs' retention: the data directory stays under its bound, the outbox and the unreleased WAL lose nothing", async () => {
    const serve = await startServe({
      assembler: { quietPeriodMs: 100 },
      receiver: { wal: WAL },
      sinks: { retention: LOGS },
      // Nothing listens on port 9: every produce fails, nothing is ever acknowledged.
      kafka: { brokers: ['127.0.0.1:9'], connectionTimeoutMs: 200, requestTimeoutMs: 500, retryInitialMs: 100, retryMaxMs: 500, ...OUTBOX },
    });
    let killed = false;
    try {
      let sent = 0;
      let refused = 0;
      let maxDirBytes = 0;
      const RUNS_PER_REQUEST = 20;
      // Until the local logs took 10x their retention and the full outbox refused input for a while.
      for (let round = 0; round < 2_000; round++) {
        const res = await postJson(serve.url, request(sent, RUNS_PER_REQUEST));
        if (res.status === 200) sent += RUNS_PER_REQUEST;
        else {
          expect(res.status).toBe(503);
          refused += 1;
          await new Promise((r) => setTimeout(r, 100));
        }
        if (round % 5 === 0)
          maxDirBytes = Math.max(
            maxDirBytes,
            (await filesUnder(serve.dataDir)).reduce((a, f) => a + f.size, 0),
          );
        if (refused >= 10) break;
      }
      // The listing below is not atomic: a segment rolled and one deleted between its readdir and
      // its stats would be counted with the new active file's bytes. So list once serve is idle
      // (every trajectory closed and written), when the logs are where their bounds keep them.
      for (let wait = 0; wait < 100; wait++) {
        const open = metricValue(await (await fetch(`${serve.url}/metrics`)).text(), 'trajwatch_trajectories_open', {});
        if (open === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 300)); // the last closes' lines reach their files
      const written = {
        trajectories: await bytesWritten(serve.dataDir, 'trajectories'),
        findings: await bytesWritten(serve.dataDir, 'findings'),
        alarms: await bytesWritten(serve.dataDir, 'alarms'),
      };
      const files = await filesUnder(serve.dataDir);
      const dirBytes = files.reduce((a, f) => a + f.size, 0);
      maxDirBytes = Math.max(maxDirBytes, dirBytes);
      const metrics = await (await fetch(`${serve.url}/metrics`)).text();
      const outboxFiles = files.filter((f) => /outbox\/kafka\/seg-\d{16}\.jsonl$/.test(f.path));
      const outboxSeqs: number[] = [];
      for (const f of outboxFiles.sort((a, b) => a.path.localeCompare(b.path))) {
        for (const line of (await readFile(f.path, 'utf8')).split('\n')) if (line !== '') outboxSeqs.push((JSON.parse(line) as { seq: number }).seq);
      }
      console.log(
        `retention: ${sent} runs accepted, ${refused} requests refused (503); written trajectories ${written.trajectories} B, ` +
          `findings ${written.findings} B, alarms ${written.alarms} B; data directory ${dirBytes} B now, ${maxDirBytes} B at most, bound ${BOUND_BYTES} B; ` +
          `outbox ${outboxSeqs.length} records in ${outboxFiles.length} segments`,
      );
      expect(written.trajectories).toBeGreaterThanOrEqual(10 * LOGS.trajectories.maxBytes);
      expect(written.findings).toBeGreaterThanOrEqual(10 * LOGS.findings.maxBytes);
      expect(maxDirBytes).toBeLessThanOrEqual(BOUND_BYTES);
      // Each local log within its own bound.
      for (const [name, limits] of Object.entries(LOGS)) {
        const bytes = files.filter((f) => new RegExp(`/${name}(\\.\\d{16})?\\.jsonl$`).test(f.path)).reduce((a, f) => a + f.size, 0);
        expect(bytes, name).toBeLessThanOrEqual(limits.maxBytes);
      }
      // What retention deleted is counted, per log, and the gauge shows each log within its bound.
      expect(metricValue(metrics, 'trajwatch_local_log_retention_deleted_bytes_total', { log: 'trajectories.jsonl' })).toBeGreaterThan(
        9 * LOGS.trajectories.maxBytes,
      );
      for (const name of ['trajectories', 'findings', 'alarms'] as const) {
        expect(metricValue(metrics, 'trajwatch_local_log_bytes', { log: `${name}.jsonl` })).toBeLessThanOrEqual(LOGS[name].maxBytes);
      }
      // The refusals came from the full outbox, and it deleted nothing: every record it took is there, in order.
      expect(metricValue(metrics, 'trajwatch_otlp_requests_refused_total', { reason: 'kafka-outbox-full' })).toBeGreaterThan(0);
      expect(outboxSeqs).toEqual(outboxSeqs.map((_, i) => i));
      expect(metricValue(metrics, 'trajwatch_sink_backlog_records', { sink: 'kafka' })).toBeGreaterThanOrEqual(outboxSeqs.length);
      // The local findings log dropped its oldest lines while the outbox still holds the first record.
      const oldestLocal = files.some((f) => /\/findings\.0{16}\.jsonl$/.test(f.path));
      expect(oldestLocal).toBe(false);
      expect(outboxSeqs[0]).toBe(0);

      // Requests whose findings wait for the outbox are not released: after a SIGKILL they are all in the WAL.
      serve.child.kill('SIGKILL');
      await new Promise((r) => serve.child.once('exit', r));
      killed = true;
      const { wal, records } = await SpanWal.open(join(serve.dataDir, 'wal'), WAL);
      const seqs = (await collect(records)).map((r) => r.seq);
      const { releasedBelow } = wal.stats();
      await wal.close();
      console.log(`retention: WAL after SIGKILL: ${seqs.length} unreleased requests from seq ${releasedBelow}`);
      expect(seqs.length).toBeGreaterThan(0);
      expect(seqs).toEqual(seqs.map((_, i) => releasedBelow + i));
    } finally {
      if (!killed) await serve.stop();
    }
  }, 240_000);
});
