import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StorageError } from '../../src/errors.ts';
import { encodeFrame, frameCodec } from '../../src/storage/frame-codec.ts';
import { lineCodec } from '../../src/storage/line-codec.ts';
import { readSegment } from '../../src/storage/segment-reader.ts';
import { collect } from '../helpers/collect.ts';

async function file(bytes: Buffer): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'trajwatch-seg-')), 'seg');
  await writeFile(path, bytes);
  return path;
}

const codec = frameCodec('test log', 4);
const frames = (n: number, size: (i: number) => number) => Array.from({ length: n }, (_, i) => encodeFrame(i % 2, i, Buffer.alloc(size(i), i & 0xff)));

describe('readSegment', () => {
  it('streams frames larger and smaller than its chunk, each whole and in order, with their offsets', async () => {
    const written = frames(40, (i) => (i * 997) % 5000);
    const path = await file(Buffer.concat(written.flat()));
    const read = await collect(readSegment(path, codec, { chunkBytes: 1024 }));
    expect(read.map((r) => [r.value.seq, r.value.type, r.value.payload.length])).toEqual(written.map(([h, p], i) => [i, i % 2, p.length]));
    let offset = 0;
    for (const [i, r] of read.entries()) {
      expect(r.offset).toBe(offset);
      expect(r.value.payload.equals(written[i]![1])).toBe(true);
      offset += r.bytes;
    }
  });

  it('reports a torn final frame (cut short, or complete with a bad checksum) when allowed, and fails without', async () => {
    const whole = Buffer.concat(frames(3, () => 100).flat());
    for (const torn of [whole.subarray(0, whole.length - 7), Buffer.concat([whole.subarray(0, whole.length - 1), Buffer.from([0xee])])]) {
      const path = await file(torn);
      let tornAt: number | undefined;
      const read = await collect(readSegment(path, codec, { chunkBytes: 64, onTornTail: (at) => (tornAt = at) }));
      expect(read).toHaveLength(2);
      expect(tornAt).toBe(2 * 115);
      await expect(collect(readSegment(path, codec))).rejects.toThrow(/truncated record before the last segment/);
    }
  });

  it('calls a bad frame before the end damage, not a torn tail', async () => {
    const bytes = Buffer.concat(frames(3, () => 100).flat());
    bytes[135] = bytes[135]! ^ 0xff; // a payload byte of the second frame
    const path = await file(bytes);
    const reading = collect(readSegment(path, codec, { onTornTail: () => undefined }));
    await expect(reading).rejects.toBeInstanceOf(StorageError);
    await expect(collect(readSegment(path, codec, { onTornTail: () => undefined }))).rejects.toThrow(/at byte 115: checksum mismatch/);
  });

  it('reads JSON lines across chunk boundaries; a final line without its newline is the torn tail', async () => {
    const lines = Array.from({ length: 30 }, (_, i) => JSON.stringify({ i, pad: 'x'.repeat(i * 13) }));
    const path = await file(Buffer.from(lines.join('\n') + '\n{"torn":'));
    let tornAt: number | undefined;
    const read = await collect(readSegment(path, lineCodec('lines'), { chunkBytes: 50, onTornTail: (at) => (tornAt = at) }));
    expect(read.map((r) => r.value.toString())).toEqual(lines);
    expect(tornAt).toBe(Buffer.byteLength(lines.join('\n') + '\n'));
  });
});
