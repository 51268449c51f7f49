import { appendFile, mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeLines, lineCodec } from '../../src/storage/line-codec.ts';
import { findLinesTailEnd } from '../../src/storage/segment-files.ts';
import { numberedSegments, rotatedSegments } from '../../src/storage/segment-naming.ts';
import { SegmentedLog, type SegmentedLogOptions } from '../../src/storage/segmented-log.ts';
import { collect } from '../helpers/collect.ts';

const codec = lineCodec('test log');

async function dirBytes(dir: string): Promise<number> {
  let sum = 0;
  for (const name of await readdir(dir)) sum += (await stat(join(dir, name))).size;
  return sum;
}

function options(over: Partial<SegmentedLogOptions<Buffer>> = {}): SegmentedLogOptions<Buffer> {
  return {
    naming: rotatedSegments('log.jsonl'),
    codec,
    findTailEnd: findLinesTailEnd,
    segmentBytes: 1000,
    retention: { maxBytes: 4000 },
    onWriteFailure: 'retry',
    ...over,
  };
}

const line = (i: number) => encodeLines([JSON.stringify({ i, pad: 'p'.repeat(80) })]);

describe('SegmentedLog', () => {
  it('rotates: keeps the active name, names closed files by the offset of their first byte, and stays under maxBytes while 10x that is written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-log-'));
    const log = await SegmentedLog.open(dir, options());
    let written = 0;
    let maxSeen = 0;
    for (let i = 0; i < 450; i++) {
      const bytes = line(i);
      written += bytes.length;
      log.append([bytes]);
      if (i % 3 !== 0) continue;
      await log.flushed();
      maxSeen = Math.max(maxSeen, await dirBytes(dir));
    }
    await log.flushed();
    expect(written).toBeGreaterThan(10 * 4000);
    // The bound: maxBytes (each segment at most segmentBytes, batches cut to fit).
    expect(maxSeen).toBeLessThanOrEqual(4000);
    for (const name of await readdir(dir)) expect((await stat(join(dir, name))).size).toBeLessThanOrEqual(1000);
    const names = (await readdir(dir)).sort();
    expect(names.at(-1)).toBe('log.jsonl');
    const closed = names.slice(0, -1);
    expect(closed.every((n) => /^log\.\d{16}\.jsonl$/.test(n))).toBe(true);
    // The offset a closed file is named by plus its size is the next one's name.
    const offsets = closed.map((n) => Number(n.slice(4, 20)));
    for (let i = 0; i + 1 < closed.length; i++) expect(offsets[i]! + (await stat(join(dir, closed[i]!))).size).toBe(offsets[i + 1]);
    expect(offsets.at(-1)! + (await stat(join(dir, closed.at(-1)!))).size + (await stat(join(dir, 'log.jsonl'))).size).toBe(written);
    // What is left is the newest lines, whole and in order.
    const text = (await Promise.all(names.map((n) => readFile(join(dir, n), 'utf8')))).join('');
    const kept = text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { i: number }).i);
    expect(kept).toEqual(kept.map((_, k) => 450 - kept.length + k));
    expect(log.deleted.bytes + log.fileBytes).toBe(written);
    await log.close();
  });

  it('never deletes a segment the owner still needs; refuses (wouldOverflow) once the needed data alone fills maxBytes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-log-'));
    const floor = { below: 0 };
    const log = await SegmentedLog.open(dir, options({ naming: numberedSegments('seg-', '.jsonl'), needed: (s) => s.lastNo >= floor.below }));
    await log.ensureActive(0);
    let seq = 0;
    while (!log.wouldOverflow(line(0).length)) await log.append([line(seq)], seq++, true);
    expect(seq).toBeGreaterThan(30);
    const all = await collect(log.records());
    expect(all).toHaveLength(seq);
    expect(log.deleted.segments).toBe(0);
    // Released up to a point: the segments wholly below it may go, and there is room again.
    floor.below = 20;
    await log.dropUnneeded();
    expect(log.deleted.segments).toBeGreaterThan(0);
    const left = (await collect(log.records())).map((r) => JSON.parse(r.value.toString()) as { i: number });
    expect(left[0]!.i).toBeLessThanOrEqual(20);
    expect(left.at(-1)!.i).toBe(seq - 1);
    expect(log.wouldOverflow(line(0).length)).toBe(false);
    await log.close();
  });

  it('cuts a torn final line at open and appends after the last whole one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-log-'));
    const first = await SegmentedLog.open(dir, options());
    first.append([encodeLines(['{"a":1}'])]);
    await first.close();
    await appendFile(join(dir, 'log.jsonl'), '{"torn":');
    const second = await SegmentedLog.open(dir, options());
    expect(second.tornRecords).toBe(1);
    second.append([encodeLines(['{"b":2}'])]);
    await second.close();
    expect(await readFile(join(dir, 'log.jsonl'), 'utf8')).toBe('{"a":1}\n{"b":2}\n');
  });

  it('deletes closed segments older than maxAgeHours at the next write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-log-'));
    const log = await SegmentedLog.open(dir, options({ retention: { maxBytes: 1 << 20, maxAgeHours: 0.5 / 3_600_000 } }));
    for (let i = 0; i < 30; i++) log.append([line(i)]);
    await log.flushed();
    await new Promise((r) => setTimeout(r, 5));
    for (let i = 30; i < 45; i++) log.append([line(i)]);
    await log.flushed();
    expect(log.deleted.segments).toBeGreaterThan(0);
    await log.close();
  });

  it('writes a turn of more buffers than one writev takes (IOV_MAX) whole and in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-log-'));
    const log = await SegmentedLog.open(dir, options({ segmentBytes: 1 << 20, retention: { maxBytes: 1 << 22 } }));
    const lines = Array.from({ length: 3000 }, (_, i) => `{"n":${i}}`);
    for (const l of lines) log.append([Buffer.from(l), Buffer.from('\n')]);
    await log.flushed();
    expect(log.writtenRecords).toBe(3000);
    expect((await collect(log.records())).map((r) => r.value.toString())).toEqual(lines);
    await log.close();
  });
});
