import { appendFile, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StorageError } from '../../../src/errors.ts';
import { SpanWal } from '../../../src/ingest/wal/span-wal.ts';
import { collect } from '../../helpers/collect.ts';

const SMALL = { maxBytes: 1024 * 1024, segmentBytes: 1024 };

async function freshDir(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'trajwatch-wal-')), 'wal');
}

async function appendAll(wal: SpanWal, bodies: string[]): Promise<number[]> {
  const seqs: number[] = [];
  const durables: Promise<void>[] = [];
  for (const body of bodies) {
    const r = wal.append('json', Buffer.from(body));
    if (!r.ok) throw new Error(`append refused: ${r.reason}`);
    seqs.push(r.seq);
    durables.push(r.durable);
  }
  await Promise.all(durables);
  return seqs;
}

async function segmentFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith('.wal')).sort();
}

describe('SpanWal', () => {
  it('returns every appended request, in order and with its format, when reopened', async () => {
    const dir = await freshDir();
    const { wal, records } = await SpanWal.open(dir, SMALL);
    expect(await collect(records)).toEqual([]);
    const seqs = await appendAll(wal, ['{"a":1}', '{"b":2}']);
    const proto = wal.append('protobuf', Buffer.from([1, 2, 3]));
    expect(proto.ok).toBe(true);
    if (proto.ok) await proto.durable;
    await wal.close();

    const reopened = await SpanWal.open(dir, SMALL);
    expect((await collect(reopened.records)).map((r) => [r.seq, r.format, r.bytes.toString('hex')])).toEqual([
      [seqs[0], 'json', Buffer.from('{"a":1}').toString('hex')],
      [seqs[1], 'json', Buffer.from('{"b":2}').toString('hex')],
      [seqs[1]! + 1, 'protobuf', '010203'],
    ]);
    // Numbering continues after the last record.
    const next = reopened.wal.append('json', Buffer.from('{}'));
    expect(next.ok && next.seq).toBe(seqs[1]! + 2);
    await reopened.wal.close();
  });

  it('writes the requests of one event-loop turn with one write', async () => {
    const dir = await freshDir();
    const { wal } = await SpanWal.open(dir, { maxBytes: 1024 * 1024, segmentBytes: 1024 * 1024 });
    await appendAll(
      wal,
      Array.from({ length: 50 }, (_, i) => `{"n":${i}}`),
    );
    await wal.close();
    const reopened = await SpanWal.open(dir, SMALL);
    expect(await collect(reopened.records)).toHaveLength(50);
    expect(await segmentFiles(dir)).toHaveLength(1);
    await reopened.wal.close();
  });

  it('ignores and cuts off a torn final record, counting it', async () => {
    const dir = await freshDir();
    const { wal } = await SpanWal.open(dir, SMALL);
    await appendAll(wal, ['{"kept":1}', '{"kept":2}']);
    await wal.close();
    const [segment] = await segmentFiles(dir);
    const path = join(dir, segment!);
    const whole = (await stat(path)).size;
    // A header announcing 100 bytes, followed by only 3 of them: a crash mid-write.
    const torn = Buffer.alloc(18);
    torn.writeUInt32BE(100, 0);
    await appendFile(path, torn);

    const reopened = await SpanWal.open(dir, SMALL);
    expect((await collect(reopened.records)).map((r) => r.bytes.toString())).toEqual(['{"kept":1}', '{"kept":2}']);
    expect(reopened.wal.stats().tornRecords).toBe(1);
    expect((await stat(path)).size).toBe(whole);
    await reopened.wal.close();
  });

  it('ignores a final record whose checksum does not match (garbled while being written)', async () => {
    const dir = await freshDir();
    const { wal } = await SpanWal.open(dir, SMALL);
    await appendAll(wal, ['{"kept":1}', '{"last":2}']);
    await wal.close();
    const path = join(dir, (await segmentFiles(dir))[0]!);
    const bytes = await readFile(path);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 2) ^ 0xff, bytes.length - 2);
    await writeFile(path, bytes);

    const reopened = await SpanWal.open(dir, SMALL);
    expect((await collect(reopened.records)).map((r) => r.bytes.toString())).toEqual(['{"kept":1}']);
    expect(reopened.wal.stats().tornRecords).toBe(1);
    await reopened.wal.close();
  });

  it('refuses to start on a damaged record before the end, naming the file and byte', async () => {
    const dir = await freshDir();
    const { wal } = await SpanWal.open(dir, SMALL);
    await appendAll(wal, ['{"first":1}', '{"second":2}']);
    await wal.close();
    const path = join(dir, (await segmentFiles(dir))[0]!);
    const bytes = await readFile(path);
    bytes.writeUInt8(bytes.readUInt8(16) ^ 0xff, 16); // inside the first record's payload
    await writeFile(path, bytes);

    const opening = SpanWal.open(dir, SMALL);
    await expect(opening).rejects.toBeInstanceOf(StorageError);
    await expect(opening).rejects.toThrow(/damaged write-ahead log .*seg-0{16}\.wal at byte 0: checksum mismatch/);
  });

  it('after a release, deletes whole finished segments and does not replay released requests', async () => {
    const dir = await freshDir();
    const { wal } = await SpanWal.open(dir, { maxBytes: 1024 * 1024, segmentBytes: 200 });
    const body = 'x'.repeat(100);
    const seqs: number[] = [];
    // One append per turn, so segments roll at their size bound.
    for (let i = 0; i < 10; i++) seqs.push(...(await appendAll(wal, [body])));
    const before = await segmentFiles(dir);
    expect(before.length).toBeGreaterThan(3);
    const bytesBefore = wal.pendingBytes;

    await wal.release(seqs[7]!);
    const after = await segmentFiles(dir);
    expect(after.length).toBeLessThan(before.length);
    expect(wal.pendingBytes).toBeLessThan(bytesBefore);
    expect(wal.stats().releasedBelow).toBe(seqs[7]);
    await wal.close();

    const reopened = await SpanWal.open(dir, SMALL);
    expect((await collect(reopened.records)).map((r) => r.seq)).toEqual(seqs.slice(7));
    await reopened.wal.close();
  });

  it('refuses an append that would pass maxBytes, and takes one again after a release', async () => {
    const dir = await freshDir();
    const { wal } = await SpanWal.open(dir, { maxBytes: 2_000, segmentBytes: 1024 });
    const body = 'y'.repeat(300);
    const seqs: number[] = [];
    for (;;) {
      const r = wal.append('json', Buffer.from(body));
      if (!r.ok) {
        expect(r.reason).toBe('full');
        break;
      }
      seqs.push(r.seq);
      await r.durable;
    }
    expect(seqs.length).toBeGreaterThanOrEqual(5);
    await wal.release(seqs.at(-1)! + 1);
    expect(wal.refusal()).toBeUndefined();
    expect(wal.append('json', Buffer.from(body)).ok).toBe(true);
    await wal.close();
  });
});
