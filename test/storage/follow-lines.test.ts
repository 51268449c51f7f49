import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlLog } from '../../src/sinks/jsonl-log.ts';
import { followLines } from '../../src/storage/follow-lines.ts';

describe('followLines', () => {
  it('follows a log across its rotations and retention deletions without losing or repeating a line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-follow-'));
    const path = join(dir, 'findings.jsonl');
    const log = await JsonlLog.open(path, { retention: { maxBytes: 64 * 1024, segmentBytes: 4096 } });
    const stop = new AbortController();
    const seen: string[] = [];
    const following = (async () => {
      for await (const line of followLines(path, { fromStart: true, pollMs: 20, signal: stop.signal })) {
        seen.push(line);
        if (seen.length === 3000) stop.abort();
      }
    })();
    const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ i, pad: 'y'.repeat(60) }));
    for (let i = 0; i < lines.length; i += 50) {
      log.append(lines.slice(i, i + 50));
      await log.flushed();
      await new Promise((r) => setTimeout(r, 2));
      // Several rotations between two looks, but never so far ahead that retention deletes
      // what the follower has not read (a follower slower than retention loses lines by design).
      while (seen.length < i - 400) await new Promise((r) => setTimeout(r, 2));
    }
    await Promise.race([following, new Promise((r) => setTimeout(r, 10_000))]);
    stop.abort();
    await log.close();
    expect(log.disk.deletedSegments).toBeGreaterThan(0);
    expect(seen).toEqual(lines);
  });
});
