import { appendFile, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RevisionLog } from '../../src/assemble/revision-log.ts';
import { RevisionMemoryConfigSchema } from '../../src/assemble/revision-log-config.ts';
import type { RememberedRevision } from '../../src/assemble/revision-memory.ts';
import { SpanDigests } from '../../src/assemble/span-digests.ts';
import { makeStep } from '../helpers/steps.ts';

function revision(i: number, spans = 3): RememberedRevision {
  return {
    key: `conv-${i}`,
    revision: 1 + (i % 3),
    inherited: {
      reasons: i % 2 === 0 ? [] : ['refused-spans'],
      reasonsWithoutSteps: [],
      conflicts: i % 5 === 0 ? [{ traceId: `t-${i}`, spanId: 's', keptDigest: 'a'.repeat(16), refusedDigest: 'b'.repeat(64) }] : [],
      sessionConflicts: [],
      refusedSpans: i % 2,
    },
    traceIds: [`t-${i}`],
    partitions: i % 4 === 0 ? [-1] : undefined,
    digests: SpanDigests.of(Array.from({ length: spans }, (_, s) => makeStep({ id: `s${s}`, traceId: `t-${i}` }))),
    closedAtMs: 1_000 * i,
  };
}

const config = (over: Record<string, unknown> = {}) => RevisionMemoryConfigSchema.parse(over);

async function reopen(dir: string, context: { priorData?: boolean; walCoversTail?: boolean } = {}, over: Record<string, unknown> = {}) {
  const log = await RevisionLog.open(dir, config(over));
  const restored: RememberedRevision[] = [];
  const replay = await log.replay((r) => restored.push(r), { priorData: false, walCoversTail: true, nowMs: 99_999_999, ...context });
  return { log, restored, replay };
}

const comparable = (r: RememberedRevision) => ({ ...r, digests: r.digests?.toBase64() });

describe('RevisionLog: the closed-revision memory on disk', () => {
  it('reads back every revision appended, in order, across two restarts, numbering on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-revisions-'));
    const first = await reopen(dir);
    expect(first.replay).toEqual({ revisions: 0, cut: undefined, horizonMs: undefined });
    first.log.append([revision(1), revision(2)]);
    await first.log.close();
    const second = await reopen(dir);
    second.log.append([revision(3)]);
    await second.log.close();
    const third = await reopen(dir);
    await third.log.close();
    expect(third.restored.map(comparable)).toEqual([revision(1), revision(2), revision(3)].map(comparable));
    expect(third.replay.cut).toBeUndefined();
    const numbers: number[] = [];
    for (const name of (await readdir(dir)).sort()) {
      for (const line of (await readFile(join(dir, name), 'utf8')).split('\n').filter((l) => l !== '')) numbers.push((JSON.parse(line) as { n: number }).n);
    }
    expect(numbers).toEqual([0, 1, 2]);
  });

  it('cut by retention: the oldest segments go, and the horizon covers every revision they held', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-revisions-'));
    const bounds = { maxBytes: 16 * 1024, segmentBytes: 4096 };
    const { log } = await reopen(dir, {}, bounds);
    const all = Array.from({ length: 200 }, (_, i) => revision(i, 8));
    for (const r of all) {
      log.append([r]);
      await log.flushed();
    }
    expect(log.fileBytes).toBeLessThanOrEqual(bounds.maxBytes);
    await log.close();
    const again = await reopen(dir, {}, bounds);
    await again.log.close();
    expect(again.replay.cut).toBe('retention');
    const kept = new Set(again.restored.map((r) => r.key));
    const lost = all.filter((r) => !kept.has(r.key));
    expect(lost.length).toBeGreaterThan(0);
    for (const r of lost) expect(r.closedAtMs).toBeLessThanOrEqual(again.replay.horizonMs!);
    // The horizon is no later than the newest of the first kept segment: not every span is "maybe seen".
    expect(again.replay.horizonMs!).toBeLessThan(all.at(-1)!.closedAtMs);
  });

  it('lost: no memory in a data directory that held trajectories sets the horizon at start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-revisions-'));
    const lost = await reopen(dir, { priorData: true });
    await lost.log.close();
    expect(lost.replay).toEqual({ revisions: 0, cut: 'lost', horizonMs: 99_999_999 });
    const fresh = await reopen(await mkdtemp(join(tmpdir(), 'trajwatch-revisions-')), { priorData: false });
    await fresh.log.close();
    expect(fresh.replay.cut).toBeUndefined();
    // Its file exists from the first start: empty, it is whole (no revision's output was durable yet).
    const empty = await reopen(dir, { priorData: true });
    await empty.log.close();
    expect(empty.replay.cut).toBeUndefined();
  });

  it('a torn last line sets the horizon at start unless a write-ahead log still holds its spans', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-revisions-'));
    const { log } = await reopen(dir);
    log.append([revision(1)]);
    await log.close();
    const [segment] = (await readdir(dir)).sort();
    await appendFile(join(dir, segment!), '{"n":1,"key":"conv-2","revi');
    const torn = await reopen(dir, { walCoversTail: false });
    await torn.log.close();
    expect([torn.restored.length, torn.replay.cut, torn.replay.horizonMs]).toEqual([1, 'torn-tail', 99_999_999]);
    await appendFile(join(dir, segment!), '{"n":1,"key":"conv-2","revi');
    const covered = await reopen(dir, { walCoversTail: true });
    await covered.log.close();
    expect([covered.restored.length, covered.replay.cut]).toEqual([1, undefined]);
  });
});
