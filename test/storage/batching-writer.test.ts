import { describe, expect, it } from 'vitest';
import { StorageError } from '../../src/errors.ts';
import { Backoff } from '../../src/storage/backoff.ts';
import { BatchingWriter, type Batch } from '../../src/storage/batching-writer.ts';

/** An in-memory target (the unit's own seam: the file side is tested in segmented-log.test.ts). */
function target(failFirst = 0) {
  const batches: string[][] = [];
  let failures = failFirst;
  const write = async (batch: Batch) => {
    if (failures-- > 0) throw new Error('ENOSPC: no space left on device');
    batches.push(batch.buffers.map((b) => b.toString()));
  };
  return { batches, write };
}

/** No jitter: each wait is its ceiling, so the timings below are fixed. */
const ceiling = () => 1;

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('BatchingWriter', () => {
  it('writes records appended in one turn of the event loop as one batch, in order', async () => {
    const t = target();
    const writer = new BatchingWriter(t.write, 'retry', 'test');
    for (const s of ['a', 'b', 'c']) writer.append([Buffer.from(s)]);
    await writer.flushed();
    writer.append([Buffer.from('d')]);
    await writer.flushed();
    expect(t.batches).toEqual([['a', 'b', 'c'], ['d']]);
    expect(writer.writtenRecords).toBe(4);
    expect(writer.pendingBytes).toBe(0);
  });

  it("cuts a turn's records into batches of at most maxBatchBytes (a larger record alone), in order", async () => {
    const t = target();
    const writer = new BatchingWriter(t.write, 'retry', 'test', { maxBatchBytes: 4 });
    for (const s of ['ab', 'c', 'd', 'efghij', 'k']) writer.append([Buffer.from(s)]);
    await writer.flushed();
    expect(t.batches).toEqual([['ab', 'c', 'd'], ['efghij'], ['k']]);
  });

  it('retry: keeps a failed batch queued and writes it again after a backoff, reporting the failure meanwhile', async () => {
    const t = target(2);
    const writer = new BatchingWriter(t.write, 'retry', 'test', { backoff: new Backoff(10, 20, ceiling) });
    writer.append([Buffer.from('a')]);
    await tick();
    expect(writer.failure).toBeInstanceOf(StorageError);
    expect(writer.pendingRecords).toBe(1);
    writer.append([Buffer.from('b')]);
    for (let i = 0; i < 50 && t.batches.length === 0; i++) await tick();
    await writer.flushed();
    expect(t.batches.flat()).toEqual(['a', 'b']);
    expect(writer.failure).toBeUndefined();
  });

  it('refuse: rejects the records of a failed batch and keeps reporting the failure until the backoff has passed', async () => {
    const t = target(1);
    const writer = new BatchingWriter(t.write, 'refuse', 'test', { backoff: new Backoff(30, 30, ceiling) });
    const first = writer.append([Buffer.from('a')], 0, true);
    await expect(first).rejects.toThrow(/test: ENOSPC/);
    expect(writer.failure).toBeInstanceOf(StorageError);
    await new Promise((r) => setTimeout(r, 60));
    expect(writer.failure).toBeUndefined();
    await writer.append([Buffer.from('b')], 1, true);
    expect(t.batches).toEqual([['b']]);
  });

  it('stops at a failure that is not retriable (a torn batch could not be cut): nothing more is written, under either policy', async () => {
    for (const policy of ['retry', 'refuse'] as const) {
      const batches: string[][] = [];
      let calls = 0;
      const write = async (batch: Batch) => {
        calls += 1;
        if (calls === 1) throw new StorageError('cannot write or repair seg', { retriable: false });
        batches.push(batch.buffers.map((b) => b.toString()));
      };
      const writer = new BatchingWriter(write, policy, 'test', { backoff: new Backoff(5, 5, ceiling) });
      const first = writer.append([Buffer.from('a')], 0, true);
      await expect(policy === 'refuse' ? first : writer.flushed()).rejects.toThrow(/cannot write or repair/);
      await new Promise((r) => setTimeout(r, 30));
      expect(writer.failure?.retriable).toBe(false);
      await expect(writer.append([Buffer.from('b')], 1, true)).rejects.toThrow(/cannot write or repair/);
      await expect(writer.flushed()).rejects.toThrow(/cannot write or repair/);
      expect(calls).toBe(1);
      expect(batches).toEqual([]);
      if (policy === 'retry') void first.catch(() => undefined);
    }
  });
});

describe('BatchingWriter after a retry timer outlives its failure', () => {
  it('writes records appended after flushed() recovered the failed batch before its retry timer fired', async () => {
    const t = target(1);
    const writer = new BatchingWriter(t.write, 'retry', 'test', { backoff: new Backoff(20, 20, ceiling) });
    writer.append([Buffer.from('a')]);
    await tick();
    expect(writer.failure).toBeInstanceOf(StorageError);
    // flushed() tries the failed batch at once (the disk is back): the queue is empty before the timer fires.
    await writer.flushed();
    expect(t.batches.flat()).toEqual(['a']);
    await new Promise((r) => setTimeout(r, 60)); // the stale retry timer fires here
    const b = writer.append([Buffer.from('b')], 1, true);
    const outcome = await Promise.race([b.then(() => 'written'), new Promise((r) => setTimeout(() => r('stuck'), 500))]);
    expect(outcome).toBe('written');
    expect(t.batches.flat()).toEqual(['a', 'b']);
  });
});
