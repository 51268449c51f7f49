import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RevisionLog } from '../../src/assemble/revision-log.ts';
import { RevisionMemoryConfigSchema } from '../../src/assemble/revision-log-config.ts';
import type { RememberedRevision } from '../../src/assemble/revision-memory.ts';
import type { AnalysisManifest } from '../../src/findings/manifest-schema.ts';
import { RevisionMemorySink } from '../../src/sinks/revision-memory-sink.ts';

const remembered = (key: string, revision = 1): RememberedRevision => ({
  key,
  revision,
  inherited: { reasons: [], reasonsWithoutSteps: [], conflicts: [], sessionConflicts: [], refusedSpans: 0 },
  traceIds: [key],
  partitions: undefined,
  digests: undefined,
  closedAtMs: 1,
});
const manifest = (key: string, revision = 1) => ({ subject: { trajectory_key: key, trace_ids: [key], revision } }) as unknown as AnalysisManifest;

async function readBack(dir: string): Promise<string[]> {
  const log = await RevisionLog.open(dir, RevisionMemoryConfigSchema.parse({}));
  const keys: string[] = [];
  await log.replay((r) => keys.push(`${r.key}@${r.revision}`), { priorData: false, walCoversTail: true, nowMs: 0 });
  await log.close();
  return keys;
}

describe('RevisionMemorySink: a revision is remembered only once its output is durable', () => {
  it('writes a closed revision after its manifest, and only once the other outputs are durable; flushed() waits for it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-memory-sink-'));
    // The other sinks' durability is a gate the test opens (their own durability is tested in their suites).
    let open!: () => void;
    const others = new Promise<void>((resolve) => (open = resolve));
    const log = await RevisionLog.open(dir, RevisionMemoryConfigSchema.parse({}));
    await log.replay(() => {}, { priorData: false, walCoversTail: true, nowMs: 0 });
    const sink = new RevisionMemorySink(log, () => others);
    sink.closed(remembered('judged'));
    sink.closed(remembered('a'));
    sink.writeManifest(manifest('a'));
    sink.writeManifest(manifest('never-closed'));
    let flushed = false;
    const waiting = sink.flushed().then(() => (flushed = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(flushed).toBe(false);
    expect(await readBack(dir)).toEqual([]);
    expect(sink.backlog().records).toBe(1 + 1); // 'judged' awaits its manifest; 'a' waits for the others
    open();
    await waiting;
    expect(await readBack(dir)).toEqual(['a@1']);
    sink.writeManifest(manifest('judged'));
    await sink.flushed();
    await sink.close();
    expect(await readBack(dir)).toEqual(['a@1', 'judged@1']);
    expect(sink.backpressure()).toBe('revision-memory-closed');
  });

  it('two revisions under one key and number (a forgotten key closed again while the first awaits its judge) are each written on their own manifest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-memory-sink-'));
    const log = await RevisionLog.open(dir, RevisionMemoryConfigSchema.parse({}));
    await log.replay(() => {}, { priorData: false, walCoversTail: true, nowMs: 0 });
    const sink = new RevisionMemorySink(log, async () => {});
    sink.closed(remembered('k'));
    sink.closed({ ...remembered('k'), traceIds: ['k', 'k2'] });
    sink.writeManifest(manifest('k'));
    await sink.flushed();
    expect(sink.backlog().records).toBe(1);
    sink.writeManifest(manifest('k'));
    await sink.close();
    expect(await readBack(dir)).toEqual(['k@1', 'k@1']);
  });
});
