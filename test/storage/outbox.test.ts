import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/errors.ts';
import { SINK_RECORD_SHAPE, type SinkRecord } from '../../src/sinks/record.ts';
import { DEFAULT_OUTBOX_LIMITS, Outbox } from '../../src/storage/outbox.ts';
import type { OutboxLimits } from '../../src/storage/outbox.ts';
import { toRanges } from '../../src/storage/range-set.ts';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-outbox-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function record(id: string, topic: SinkRecord['topic'] = 'findings'): SinkRecord {
  return {
    topic,
    key: `traj-${id.length % 3}`,
    id,
    value: JSON.stringify({ finding_id: id, text: 'ünïcode ✓' }),
    headers: { schema_version: '1.1.0' },
  };
}

async function appendDurably(outbox: Outbox<SinkRecord>, records: SinkRecord[]): Promise<void> {
  const result = outbox.append(records);
  expect(result.ok).toBe(true);
  await outbox.durable();
}

async function pendingIds(outbox: Outbox<SinkRecord>): Promise<string[]> {
  return (await outbox.peek(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)).map((e) => e.record.id);
}

async function segmentFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.startsWith('seg-')).sort();
}

describe('Outbox', () => {
  it('hands out durable records in append order and forgets them once acknowledged', async () => {
    const dir = await tempDir();
    const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE);
    await appendDurably(outbox, [record('a'), record('b', 'alarms')]);
    await appendDurably(outbox, [record('c')]);

    const entries = await outbox.peek(10, 1 << 20);
    expect(entries.map((e) => e.record)).toEqual([record('a'), record('b', 'alarms'), record('c')]);
    expect(entries.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect((await outbox.peek(2, 1 << 20)).map((e) => e.record.id)).toEqual(['a', 'b']);

    await outbox.ack([0, 1]);
    expect(await pendingIds(outbox)).toEqual(['c']);
    await outbox.ack([2]);
    expect(outbox.stats()).toMatchObject({ pendingRecords: 0, pendingBytes: 0, ackedRecords: 3, segments: 0 });
    expect(await segmentFiles(dir)).toEqual([]);
    await outbox.close();
  });

  it('hands out records still being written, and records their acknowledgement only once they are durable', async () => {
    const dir = await tempDir();
    const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE);
    expect(outbox.append([record('a'), record('b')]).ok).toBe(true);
    expect(outbox.stats().queuedRecords).toBe(2); // not yet on disk

    const entries = await outbox.peek(10, 1 << 20);
    expect(entries.map((e) => e.record)).toEqual([record('a'), record('b')]);
    await outbox.ack([0]); // waits for the write, then records the ack
    expect(outbox.stats()).toMatchObject({ queuedRecords: 0, pendingRecords: 1, ackedRecords: 1 });
    expect(await pendingIds(outbox)).toEqual(['b']);
    await outbox.close();

    const reopened = await Outbox.open(dir, SINK_RECORD_SHAPE);
    expect(await pendingIds(reopened)).toEqual(['b']);
    await reopened.close();
  });

  it('peeks past a sequence number (records sent and not yet acknowledged in the outbox)', async () => {
    const dir = await tempDir();
    const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE);
    await appendDurably(
      outbox,
      ['a', 'b', 'c'].map((id) => record(id)),
    );
    outbox.append([record('d')]); // still queued
    expect((await outbox.peek(10, 1 << 20, 1)).map((e) => e.record.id)).toEqual(['c', 'd']);
    expect((await outbox.peek(1, 1 << 20, 2)).map((e) => e.seq)).toEqual([3]);
    expect(await outbox.peek(10, 1 << 20, 3)).toEqual([]);
    expect(outbox.oldestPendingSeqAfter(0)).toBe(1);
    expect(outbox.oldestPendingSeqAfter(3)).toBeUndefined();
    expect(outbox.pendingAmong([0, 3, 99]).records).toBe(2);
    await outbox.close();
  });

  it('serves records beyond its in-memory copy from disk, unchanged and in order', async () => {
    const dir = await tempDir();
    const limits: OutboxLimits = { ...DEFAULT_OUTBOX_LIMITS, segmentBytes: 4 * 1024 * 1024 };
    const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
    // 24 records of ~800 KiB: past the 16 MiB kept in memory.
    const big = (i: number): SinkRecord => ({ ...record(`big-${i}`), value: JSON.stringify({ i, pad: String(i % 10).repeat(800 * 1024) }) });
    for (let i = 0; i < 24; i += 1) await appendDurably(outbox, [big(i)]);
    const entries = await outbox.peek(100, Number.MAX_SAFE_INTEGER);
    expect(entries.map((e) => e.record)).toEqual(Array.from({ length: 24 }, (_, i) => big(i)));
    await outbox.ack(entries.slice(0, 20).map((e) => e.seq));
    expect((await outbox.peek(100, Number.MAX_SAFE_INTEGER)).map((e) => e.record)).toEqual([20, 21, 22, 23].map(big));
    await outbox.close();
  });

  it('keeps every unacknowledged record when acks delete segments while appends write new ones', async () => {
    const dir = await tempDir();
    const limits = { ...DEFAULT_OUTBOX_LIMITS, segmentBytes: 300 }; // a new segment every record or two
    const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
    const appended: string[] = [];
    const acked = new Set<string>();
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 300; i += 1) {
        const records = Array.from({ length: 1 + (i % 3) }, (_, k) => record(`w-${i}-${k}`));
        expect(outbox.append(records).ok).toBe(true);
        appended.push(...records.map((r) => r.id));
        await new Promise((r) => setImmediate(r));
      }
      writing = false;
    })();
    const acker = (async () => {
      let after = -1;
      while (writing || outbox.oldestPendingSeqAfter(after) !== undefined) {
        const entries = await outbox.peek(5, Number.MAX_SAFE_INTEGER, after);
        if (entries.length === 0) {
          await new Promise((r) => setImmediate(r));
          continue;
        }
        after = entries.at(-1)!.seq;
        // Every other record, so segments are deleted while others stay.
        const chosen = entries.filter((e) => e.seq % 2 === 0);
        await outbox.ack(chosen.map((e) => e.seq));
        for (const e of chosen) acked.add(e.record.id);
      }
    })();
    await Promise.all([writer, acker]);
    const expected = appended.filter((id) => !acked.has(id));
    expect(await pendingIds(outbox)).toEqual(expected);
    await outbox.close();
    const reopened = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
    expect(await pendingIds(reopened)).toEqual(expected);
    await reopened.close();
  });

  it('re-reads unacknowledged records after a restart, and only those', async () => {
    const dir = await tempDir();
    const first = await Outbox.open(dir, SINK_RECORD_SHAPE);
    await appendDurably(
      first,
      ['a', 'b', 'c', 'd'].map((id) => record(id)),
    );
    await first.ack([1, 3]);
    await first.close();

    const second = await Outbox.open(dir, SINK_RECORD_SHAPE);
    expect(await pendingIds(second)).toEqual(['a', 'c']);
    await appendDurably(second, [record('e')]);
    const seqs = (await second.peek(10, 1 << 20)).map((e) => e.seq);
    expect(seqs[2]).toBeGreaterThan(3); // sequence numbers are not reused while acks of them exist
    await second.close();

    const third = await Outbox.open(dir, SINK_RECORD_SHAPE);
    expect(await pendingIds(third)).toEqual(['a', 'c', 'e']);
    await third.close();
  });

  it('ignores and counts a torn final line, cuts it off, and keeps appending after it', async () => {
    const dir = await tempDir();
    const first = await Outbox.open(dir, SINK_RECORD_SHAPE);
    await appendDurably(first, [record('a'), record('b')]);
    await first.close();
    const [segment] = await segmentFiles(dir);
    await appendFile(join(dir, segment!), '{"seq":2,"topic":"findings","key":"k","id":"torn","val');

    const second = await Outbox.open(dir, SINK_RECORD_SHAPE);
    expect(second.stats().tornLinesIgnored).toBe(1);
    expect(await pendingIds(second)).toEqual(['a', 'b']);
    await appendDurably(second, [record('c')]);
    await second.close();

    const third = await Outbox.open(dir, SINK_RECORD_SHAPE);
    expect(third.stats().tornLinesIgnored).toBe(0);
    expect(await pendingIds(third)).toEqual(['a', 'b', 'c']);
    await third.close();
  });

  it('treats a terminated but garbled final line as torn too', async () => {
    const dir = await tempDir();
    const first = await Outbox.open(dir, SINK_RECORD_SHAPE);
    await appendDurably(first, [record('a')]);
    await first.close();
    const [segment] = await segmentFiles(dir);
    await appendFile(join(dir, segment!), '\u0000\u0000\u0000\n');

    const second = await Outbox.open(dir, SINK_RECORD_SHAPE);
    expect(second.stats().tornLinesIgnored).toBe(1);
    expect(await pendingIds(second)).toEqual(['a']);
    await second.close();
  });

  it('refuses to open over damaged earlier data with a StorageError naming the file and line', async () => {
    const dir = await tempDir();
    const first = await Outbox.open(dir, SINK_RECORD_SHAPE);
    await appendDurably(first, [record('a'), record('b'), record('c')]);
    await first.close();
    const [segment] = await segmentFiles(dir);
    const path = join(dir, segment!);
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines[1] = lines[1]!.slice(0, 20) + '#' + lines[1]!.slice(21);
    await writeFile(path, lines.join('\n'));

    const error = await Outbox.open(dir, SINK_RECORD_SHAPE).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).message).toContain(segment);
    expect((error as StorageError).message).toContain('line 2');
  });

  it('answers "full" at its record bound without accepting any of the call, and accepts again after acks', async () => {
    const dir = await tempDir();
    const limits: OutboxLimits = { ...DEFAULT_OUTBOX_LIMITS, maxOutboxRecords: 3 };
    const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
    await appendDurably(outbox, [record('a'), record('b')]);

    const refused = outbox.append([record('c'), record('d')]);
    expect(refused).toEqual({ ok: false, reason: 'full', pendingRecords: 2, pendingBytes: outbox.pendingBytes });
    expect(outbox.hasRoomFor(100)).toBe(true);
    await appendDurably(outbox, [record('c')]);
    expect(outbox.hasRoomFor(100)).toBe(false);
    expect(outbox.append([record('d')]).ok).toBe(false);

    await outbox.ack([0]);
    await appendDurably(outbox, [record('d')]);
    expect(await pendingIds(outbox)).toEqual(['b', 'c', 'd']);
    expect(outbox.stats().refusedFull).toBe(2);
    await outbox.close();
  });

  it('answers "full" at its byte bound, and "too-large" for a record over maxRecordBytes', async () => {
    const dir = await tempDir();
    const size = Buffer.byteLength(JSON.stringify({ seq: 0, ...record('a') })) + 1;
    const limits: OutboxLimits = { ...DEFAULT_OUTBOX_LIMITS, maxOutboxBytes: size * 2, maxRecordBytes: size + 10 };
    const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
    await appendDurably(outbox, [record('a'), record('b')]);
    expect(outbox.append([record('c')])).toMatchObject({ ok: false, reason: 'full' });

    const big = { ...record('big'), value: 'x'.repeat(size) };
    expect(outbox.append([big])).toMatchObject({ ok: false, reason: 'too-large', id: 'big' });
    expect(outbox.stats().refusedTooLarge).toBe(1);
    await outbox.close();
  });

  it('rolls segments at segmentBytes and deletes each once everything in it is acknowledged', async () => {
    const dir = await tempDir();
    const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, { ...DEFAULT_OUTBOX_LIMITS, segmentBytes: 400 });
    for (let i = 0; i < 12; i += 1) await appendDurably(outbox, [record(`r${i}`)]);
    const before = await segmentFiles(dir);
    expect(before.length).toBeGreaterThan(2);

    const all = await outbox.peek(100, 1 << 20);
    await outbox.ack(all.slice(0, 6).map((e) => e.seq));
    const after = await segmentFiles(dir);
    expect(after.length).toBeLessThan(before.length);
    expect(after.at(-1)).toBe(before.at(-1));

    await outbox.ack(all.map((e) => e.seq));
    expect(await segmentFiles(dir)).toEqual([]);
    expect((await readFile(join(dir, 'acks.jsonl'), 'utf8')).length).toBe(0);
    await outbox.close();
  });

  it('limits a peek by bytes but always returns at least one record', async () => {
    const dir = await tempDir();
    const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE);
    await appendDurably(outbox, [record('a'), record('b'), record('c')]);
    expect(await outbox.peek(10, 1)).toHaveLength(1);
    await outbox.close();
  });

  it('keeps every record whose append was confirmed durable when the process is killed mid-stream', async () => {
    const dir = await tempDir();
    const outboxUrl = pathToFileURL(join(import.meta.dirname, '../../src/storage/outbox.ts')).href;
    const recordUrl = pathToFileURL(join(import.meta.dirname, '../../src/sinks/record.ts')).href;
    // A writer process appending (and acknowledging some) as fast as it can, printing each
    // confirmed-durable id, until it is SIGKILLed at an arbitrary point.
    const script = `
      import { Outbox } from ${JSON.stringify(outboxUrl)};
      import { SINK_RECORD_SHAPE } from ${JSON.stringify(recordUrl)};
      const outbox = await Outbox.open(process.argv[1], SINK_RECORD_SHAPE, { maxOutboxBytes: 1 << 30, maxOutboxRecords: 1e6, maxRecordBytes: 1 << 20, segmentBytes: 8192 });
      for (let i = 0; ; i += 1) {
        const ids = [0, 1, 2].map((k) => 'c' + (i * 3 + k));
        outbox.append(ids.map((id) => ({ topic: 'findings', key: 'k', id, value: JSON.stringify({ id, pad: 'x'.repeat(200) }), headers: {} })));
        await outbox.durable();
        if (i % 5 === 4) {
          const entries = await outbox.peek(3, 1 << 20);
          const line = entries.map((e) => e.record.id).join(' ') + '\\n';
          process.stdout.write('acking ' + line);
          await outbox.ack(entries.map((e) => e.seq));
          process.stdout.write('acked ' + line);
        }
        process.stdout.write('durable ' + ids.join(' ') + '\\n');
      }`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const seen = { durable: new Set<string>(), acking: new Set<string>(), acked: new Set<string>() };
    const { durable, acking, acked } = seen;
    const lines = createInterface({ input: child.stdout });
    await new Promise<void>((resolve) => {
      lines.on('line', (line) => {
        const [kind, ...ids] = line.split(' ');
        for (const id of ids) seen[kind as keyof typeof seen].add(id);
        if (durable.size >= 1500 && child.exitCode === null) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    await new Promise((resolve) => child.once('exit', resolve));

    const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE);
    const pending = new Set(await pendingIds(outbox));
    // An ack cut short by the kill may or may not have reached the disk: either is fine.
    const lost = [...durable].filter((id) => !acking.has(id) && !pending.has(id));
    expect(lost).toEqual([]);
    expect([...acked].filter((id) => pending.has(id))).toEqual([]);
    expect(outbox.stats().tornLinesIgnored).toBeLessThanOrEqual(2);
    await outbox.close();
  });

  it('refuses appends after close', async () => {
    const outbox = await Outbox.open(await tempDir(), SINK_RECORD_SHAPE);
    await outbox.close();
    expect(outbox.append([record('a')])).toEqual({ ok: false, reason: 'closed' });
  });

  it('after a restart whose last segment was acknowledged and deleted, starts a new segment instead of skipping numbers in an old one', async () => {
    // The shrunk counterexample the interleaving property found once the outbox stood on the storage layer.
    const dir = await tempDir();
    // Room for seven records: the first eight take two segments, the ninth fits the first.
    const size = Buffer.byteLength(JSON.stringify({ seq: 0, ...record('a') })) + 1;
    const limits = { ...DEFAULT_OUTBOX_LIMITS, segmentBytes: 7 * size };
    let outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
    await appendDurably(
      outbox,
      ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => record(id)),
    );
    await appendDurably(outbox, [record('g'), record('h')]);
    expect(await segmentFiles(dir)).toHaveLength(2);
    await outbox.ack([6, 7]);
    expect(await segmentFiles(dir)).toHaveLength(1);
    await outbox.close();
    outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
    expect(outbox.nextSeq).toBe(8);
    await appendDurably(outbox, [record('i')]);
    await outbox.close();
    const reopened = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
    expect(await pendingIds(reopened)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'i']);
    await reopened.close();
  });

  it('never loses an unacknowledged record under any interleaving of append, ack and restart', async () => {
    type Op =
      | { kind: 'append'; count: number }
      | { kind: 'ack'; mask: boolean[] }
      | { kind: 'sendEarly'; count: number; mask: boolean[] }
      | { kind: 'restart' }
      | { kind: 'tornRestart' };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ kind: fc.constant('ack' as const), mask: fc.array(fc.boolean(), { maxLength: 12 }) }),
      fc.record({
        kind: fc.constant('sendEarly' as const),
        count: fc.integer({ min: 1, max: 5 }),
        mask: fc.array(fc.boolean(), { maxLength: 5 }),
      }),
      fc.record({ kind: fc.constant('restart' as const) }),
      fc.record({ kind: fc.constant('tornRestart' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), fc.integer({ min: 250, max: 2000 }), async (ops, segmentBytes) => {
        const dir = await tempDir();
        const limits = { ...DEFAULT_OUTBOX_LIMITS, segmentBytes };
        let outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
        const expected: string[] = [];
        let nextId = 0;
        for (const step of ops) {
          if (step.kind === 'append') {
            const records = Array.from({ length: step.count }, () => record(`id-${nextId++}`));
            await appendDurably(outbox, records);
            expected.push(...records.map((r) => r.id));
          } else if (step.kind === 'sendEarly') {
            // Appended, handed out and acknowledged (in part) before the write is durable.
            const before = outbox.nextSeq - 1;
            const records = Array.from({ length: step.count }, () => record(`id-${nextId++}`));
            expect(outbox.append(records).ok).toBe(true);
            const entries = await outbox.peek(100, Number.MAX_SAFE_INTEGER, before);
            expect(entries.map((e) => e.record.id)).toEqual(records.map((r) => r.id));
            const chosen = entries.filter((_, i) => step.mask[i] === true);
            await outbox.ack(chosen.map((e) => e.seq));
            const gone = new Set(chosen.map((e) => e.record.id));
            expected.push(...records.map((r) => r.id).filter((id) => !gone.has(id)));
          } else if (step.kind === 'ack') {
            const entries = await outbox.peek(100, Number.MAX_SAFE_INTEGER);
            const chosen = entries.filter((_, i) => step.mask[i] === true);
            await outbox.ack(chosen.map((e) => e.seq));
            const gone = new Set(chosen.map((e) => e.record.id));
            expected.splice(0, expected.length, ...expected.filter((id) => !gone.has(id)));
          } else {
            await outbox.close();
            if (step.kind === 'tornRestart') {
              const last = (await segmentFiles(dir)).at(-1);
              if (last !== undefined) await appendFile(join(dir, last), '{"seq":');
            }
            outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
          }
          expect(await pendingIds(outbox)).toEqual(expected);
        }
        await outbox.close();
        const reopened = await Outbox.open(dir, SINK_RECORD_SHAPE, limits);
        expect(await pendingIds(reopened)).toEqual(expected);
        await reopened.close();
        await rm(dir, { recursive: true, force: true });
      }),
      { numRuns: 60 },
    );
  });
});

describe('toRanges', () => {
  it('folds sorted integers into inclusive runs', () => {
    expect(toRanges([1, 2, 3, 7, 9, 10])).toEqual([
      [1, 3],
      [7, 7],
      [9, 10],
    ]);
    expect(toRanges([])).toEqual([]);
  });
});
