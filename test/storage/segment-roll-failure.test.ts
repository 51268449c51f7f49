/**
 * A roll that fails half way — the active segment renamed to its closed name, the new active
 * file not created (no inode left) — must not leave the log failing forever: once the disk
 * has room again, the retried batch goes into a new active segment and every record is kept,
 * in order. A real tmpfs with a handful of inodes (root here), so `open(O_CREAT)` answers
 * ENOSPC while renames and writes to open files still work.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeLines, lineCodec } from '../../src/storage/line-codec.ts';
import { findLinesTailEnd } from '../../src/storage/segment-files.ts';
import { numberedSegments, rotatedSegments } from '../../src/storage/segment-naming.ts';
import { SegmentedLog, type SegmentedLogOptions } from '../../src/storage/segmented-log.ts';
import { collect } from '../helpers/collect.ts';
import { mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.ts';

let mountPoint: string;
beforeAll(() => {
  mountPoint = mountTmpfs('trajwatch-inodes-', '4m', 64);
});
afterAll(() => unmountTmpfs(mountPoint));

/** Creates empty files in `dir` until no inode is left; returns their paths. */
function exhaustInodes(dir: string): string[] {
  const made: string[] = [];
  for (let i = 0; ; i++) {
    const path = join(dir, `inode-filler-${i}`);
    try {
      writeFileSync(path, '');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      return made;
    }
    made.push(path);
  }
}

const line = (i: number) => encodeLines([JSON.stringify({ i, pad: 'p'.repeat(60) })]);
const until = async (cond: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return cond();
};

const namings = {
  rotated: rotatedSegments('log.jsonl'),
  numbered: numberedSegments('log', '.jsonl'),
} as const;

describe('SegmentedLog: a roll that could not create its new segment', () => {
  for (const [name, naming] of Object.entries(namings)) {
    it(`${name} naming: fails while no inode is left, then writes every record, in order, once one is freed`, async () => {
      const dir = join(mountPoint, name);
      mkdirSync(dir);
      const options: SegmentedLogOptions<Buffer> = {
        naming,
        codec: lineCodec('test log'),
        findTailEnd: findLinesTailEnd,
        segmentBytes: 300,
        retention: { maxBytes: 1 << 20 },
        onWriteFailure: 'retry',
      };
      const log = await SegmentedLog.open(dir, options);
      let n = 0;
      // Fill the first segment (three records of ~80 bytes) and make it durable.
      for (; n < 3; n++) log.append([line(n)], n);
      await log.flushed();

      const fillers = exhaustInodes(mountPoint);
      expect(fillers.length).toBeGreaterThan(0);
      // This one does not fit the active segment: the roll needs a new file and gets ENOSPC.
      log.append([line(n)], n++);
      expect(await until(() => log.failure !== undefined)).toBe(true);
      expect(log.failure?.retriable).toBe(true);
      log.append([line(n)], n++);

      for (const f of fillers) rmSync(f);
      await log.flushed();
      expect(log.failure).toBeUndefined();
      for (; n < 12; n++) log.append([line(n)], n);
      await log.flushed();
      // What the log lists is what is on disk: no segment listed twice or listed without a file
      // (retention deleting such a phantom would unlink a live file).
      const listed = log.segments.map((seg) => seg.path.slice(dir.length + 1));
      expect(new Set(listed).size).toBe(listed.length);
      expect([...listed].sort()).toEqual(readdirSync(dir).sort());
      await log.close();

      const reopened = await SegmentedLog.open(dir, options);
      const records = (await collect(reopened.records())).map((r) => (JSON.parse(r.value.toString()) as { i: number }).i);
      await reopened.close();
      expect(records).toEqual(Array.from({ length: 12 }, (_, i) => i));
      // No empty or doubled segment left behind by the failed roll.
      const files = readdirSync(dir).sort();
      expect(new Set(files).size).toBe(files.length);
    });
  }
});
