/**
 * How fast a local JSON-lines log takes findings-sized lines at each `segmentBytes`: a small
 * segment means a rotation (rename, directory fsync, new file) every few batches. Writes
 * batches of 20 lines of ~1 KiB, one batch per event-loop turn, durably, for `--seconds` per
 * size, in a directory on the data disk (`--dir`, default the OS temp dir).
 *
 * node bench/segment-size.ts [--dir D] [--seconds 3]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { JsonlLog } from '../src/sinks/jsonl-log.ts';

const { values } = parseArgs({ options: { dir: { type: 'string' }, seconds: { type: 'string', default: '3' } } });
const seconds = Number(values.seconds);
const KiB = 1024;
const line = JSON.stringify({ finding_id: 'f'.repeat(64), claim: 'x'.repeat(900) });
for (const segmentBytes of [4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1024 * KiB, 16384 * KiB]) {
  const dir = await mkdtemp(join(values.dir ?? tmpdir(), 'segbench-'));
  const log = await JsonlLog.open(join(dir, 'findings.jsonl'), { retention: { maxBytes: Math.max(2 * segmentBytes, 64 * 1024 * KiB), segmentBytes } });
  const end = performance.now() + seconds * 1000;
  let lines = 0;
  while (performance.now() < end) {
    log.append(Array.from({ length: 20 }, () => line));
    lines += 20;
    await log.flushed();
  }
  await log.close();
  await rm(dir, { recursive: true, force: true });
  console.log(
    `segmentBytes ${String(segmentBytes / KiB).padStart(6)} KiB: ${Math.round(lines / seconds)
      .toString()
      .padStart(7)} lines/s`,
  );
}
