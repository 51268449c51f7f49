import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnalysisManifest } from '../../src/findings/manifest-schema.ts';
import type { Finding } from '../../src/findings/schema.ts';
import type { FindingLogRecord, FindingSink, FindingStream } from '../../src/sinks/finding-sink.ts';
import { mountSmallDisk, type SmallDisk } from './storage-fault.ts';

/** One sink instance under test and how to read back what it stored. */
export interface OpenedSink {
  sink: FindingSink;
  /**
   * What the sink made durable (local log: on disk) or had acknowledged (Kafka: on the topic),
   * in stored order, read through the storage itself and not through the sink: at least
   * `count` records, or whatever is there after a bounded wait.
   */
  readBack(stream: FindingStream, count: number): Promise<FindingLogRecord[]>;
}

export interface FindingSinkContract {
  name: string;
  /** Set to skip the whole suite, with the reason printed in the test name. */
  skip?: string | undefined;
  /**
   * A new sink keeping its storage in `dir` (a fresh directory), whose pending limit (bytes
   * or records not yet durable) is at most `pendingLimitRecords` findings of this suite's size.
   */
  open(dir: string, options: { pendingLimitRecords: number }): Promise<OpenedSink>;
  /** Bound on waits for a sink to notice a failure or recovery. */
  timeoutMs?: number;
}

/** A finding carrying what a sink reads (id, subject); the schema is tested elsewhere. */
export function contractFinding(i: number, key = `session-${i % 3}`): Finding {
  return {
    schema_version: '1.1.0',
    finding_id: `f1_${i.toString(16).padStart(64, '0')}`,
    subject: { trajectory_key: key, trace_ids: ['0'.repeat(32)], revision: 1 },
    claim: `claim ${i} ${'x'.repeat(200)}`,
  } as unknown as Finding;
}

export function contractManifest(i: number, key = `session-${i % 3}`): AnalysisManifest {
  return {
    record_kind: 'analysis-manifest',
    schema_version: '1.0.0',
    manifest_id: `m1_${i.toString(16).padStart(64, '0')}`,
    subject: { trajectory_key: key, trace_ids: ['0'.repeat(32)], revision: 1 },
  } as unknown as AnalysisManifest;
}

const idOf = (r: FindingLogRecord): string => ('record_kind' in r ? r.manifest_id : r.finding_id);

async function eventually(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The promises every {@link FindingSink} keeps (Vector's `assert_sink_compliance`, Hono's
 * `runTest`): each implementation's test calls this with its own `open`.
 * - durability: what `flushed()` resolved for is in storage — read back, not taken on trust;
 * - ordering: findings and manifests come back in write order, alarms on their own stream;
 * - backpressure: a reason while over the pending limit or while storage fails, none after;
 * - close: flushes, is safe twice and without use; a write after close is refused and the
 *   next `flushed()` rejects, never resolving as if it had been stored.
 */
export function runFindingSinkContract(contract: FindingSinkContract): void {
  const timeoutMs = contract.timeoutMs ?? 20_000;
  const title = contract.skip === undefined ? `${contract.name} keeps the FindingSink contract` : `${contract.name} (skipped: ${contract.skip})`;
  const withDir = async (body: (dir: string) => Promise<void>) => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-sink-contract-'));
    try {
      await body(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };

  describe.skipIf(contract.skip !== undefined)(title, () => {
    it('durability and order: what flushed() resolved for reads back from storage, findings and manifests in write order', async () => {
      await withDir(async (dir) => {
        const { sink, readBack } = await contract.open(dir, { pendingLimitRecords: 1_000 });
        const written: FindingLogRecord[] = [];
        const write = (records: Finding[]) => (sink.write(records, 'findings'), written.push(...records));
        const manifest = (m: AnalysisManifest) => (sink.writeManifest?.(m), sink.writeManifest === undefined ? undefined : written.push(m));
        write([contractFinding(1), contractFinding(2)]);
        manifest(contractManifest(1));
        await new Promise((r) => setImmediate(r)); // a second batch, in a later turn
        write([contractFinding(3)]);
        sink.write([contractFinding(3)], 'alarms');
        manifest(contractManifest(2));
        write([contractFinding(4), contractFinding(5), contractFinding(6)]);
        await sink.flushed();
        expect(sink.backlog()).toEqual({ records: 0, bytes: 0 });
        expect((await readBack('findings', written.length)).map(idOf)).toEqual(written.map(idOf));
        expect((await readBack('alarms', 1)).map(idOf)).toEqual([contractFinding(3).finding_id]);
        await sink.close();
      });
    });

    it('backpressure: a reason while more is pending than its limit, none once it drained, and nothing written meanwhile is lost', async () => {
      await withDir(async (dir) => {
        const { sink, readBack } = await contract.open(dir, { pendingLimitRecords: 4 });
        expect(sink.backpressure()).toBeUndefined();
        const findings = Array.from({ length: 40 }, (_, i) => contractFinding(100 + i));
        sink.write(findings, 'findings'); // one turn: nothing can be durable yet
        expect(sink.backpressure()).toEqual(expect.stringMatching(/\S/));
        expect(sink.backlog().records).toBeGreaterThan(0);
        await sink.flushed();
        // Delivered records may take a moment to leave the outbox (acknowledgements are recorded
        // after delivery): the reason must clear without any further write.
        await eventually('the backpressure clears', () => sink.backpressure() === undefined, timeoutMs);
        expect((await readBack('findings', findings.length)).map(idOf)).toEqual(findings.map(idOf));
        await sink.close();
      });
    });

    it('backpressure: a reason while its storage fails (a real full disk), none after it recovers, and every record written meanwhile stored in order', async (ctx) => {
      const small: SmallDisk | string = mountSmallDisk();
      if (typeof small === 'string') {
        if (process.env.CI === 'true') throw new Error(small);
        ctx.skip(small);
        return;
      }
      try {
        const { sink, readBack } = await contract.open(small.dir, { pendingLimitRecords: 1_000 });
        const before = [contractFinding(200), contractFinding(201)];
        sink.write(before, 'findings');
        await sink.flushed();
        small.fill();
        const during = Array.from({ length: 20 }, (_, i) => contractFinding(210 + i));
        sink.write(during, 'findings');
        await eventually('the sink reports its failing storage', () => sink.backpressure() !== undefined, timeoutMs);
        small.free();
        await eventually('the sink recovers', () => sink.backpressure() === undefined && sink.backlog().records === 0, timeoutMs);
        await sink.flushed();
        expect((await readBack('findings', before.length + during.length)).map(idOf)).toEqual([...before, ...during].map(idOf));
        await sink.close();
      } finally {
        small.unmount();
      }
    }, 60_000);

    it('close: flushes what was written, is safe twice and without use, and a write after close is refused, never taken as stored', async () => {
      await withDir(async (dir) => {
        const unused = await contract.open(`${dir}/unused`, { pendingLimitRecords: 1_000 });
        await unused.sink.close();
        await unused.sink.close();

        const { sink, readBack } = await contract.open(`${dir}/used`, { pendingLimitRecords: 1_000 });
        const findings = [contractFinding(300), contractFinding(301), contractFinding(302)];
        sink.write(findings, 'findings');
        await sink.close(); // no flushed() first: close flushes
        expect((await readBack('findings', findings.length)).map(idOf)).toEqual(findings.map(idOf));
        await sink.close();

        sink.write([contractFinding(303)], 'findings');
        expect(sink.backpressure()).toEqual(expect.stringMatching(/closed/));
        await expect(sink.flushed()).rejects.toThrow(/closed/);
        await sink.close();
        const stored = await readBack('findings', findings.length + 1);
        expect(stored.map(idOf)).toEqual(findings.map(idOf));
      });
    }, 60_000);
  });
}
