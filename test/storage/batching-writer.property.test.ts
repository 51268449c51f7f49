import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backoff } from '../../src/storage/backoff.ts';
import { BatchingWriter, type Batch, type OnWriteFailure, type WriterState } from '../../src/storage/batching-writer.ts';

/**
 * The writer's states under random failure and recovery schedules. The target is an injected
 * failing file: it appends whole batches to an in-memory file, or throws ENOSPC (having
 * written nothing) while the schedule says the disk is full.
 */
function failingFile() {
  const written: number[] = [];
  let failNext = 0;
  let full = false;
  const write = async (batch: Batch) => {
    await new Promise((r) => setImmediate(r)); // a write takes a trip to the thread pool
    if (full || failNext > 0) {
      failNext = Math.max(0, failNext - 1);
      throw new Error('ENOSPC: no space left on device');
    }
    for (const b of batch.buffers) written.push(b.readUInt32BE(0));
  };
  return {
    written,
    write,
    failNext: (n: number) => (failNext = n),
    setFull: (f: boolean) => (full = f),
  };
}

type Command =
  | { op: 'append'; records: number; track: boolean }
  | { op: 'fail'; writes: number }
  | { op: 'full' }
  | { op: 'free' }
  | { op: 'wait'; ms: number }
  | { op: 'flushed' };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('append' as const), records: fc.integer({ min: 1, max: 4 }), track: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('fail' as const), writes: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'full' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'free' as const }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 12 }) }) },
  { weight: 2, arbitrary: fc.constant({ op: 'flushed' as const }) },
);

const STATES: readonly WriterState[] = ['idle', 'writing', 'waiting-retry', 'broken', 'closed'];
/** Far beyond any backoff in these runs (at most 8 ms) plus the writes queued: a promise still open then is stuck. */
const SETTLE_BOUND_MS = 400;

async function settlesWithin<T>(p: Promise<T>, ms: number): Promise<'resolved' | 'rejected' | 'open'> {
  let timer: NodeJS.Timeout | undefined;
  const open = new Promise<'open'>((r) => (timer = setTimeout(() => r('open'), ms)));
  const outcome = await Promise.race([
    p.then(
      () => 'resolved' as const,
      () => 'rejected' as const,
    ),
    open,
  ]);
  clearTimeout(timer);
  return outcome;
}

function checkState(writer: BatchingWriter): void {
  expect(STATES).toContain(writer.state);
  // idle means nothing is queued: an append from idle starts a write at once.
  if (writer.state === 'idle') expect(writer.pendingRecords).toBe(0);
  // waiting-retry holds a failed batch and says so.
  if (writer.state === 'waiting-retry') {
    expect(writer.failure).toBeDefined();
    expect(writer.pendingRecords).toBeGreaterThan(0);
  }
}

async function runSchedule(policy: OnWriteFailure, commands: Command[]): Promise<void> {
  const file = failingFile();
  const writer = new BatchingWriter(file.write, policy, 'prop', { backoff: new Backoff(1, 8), maxBatchBytes: 4 * 3 });
  let next = 0;
  const tracked: { nos: number[]; promise: Promise<void>; outcome?: 'resolved' | 'rejected' }[] = [];
  for (const c of commands) {
    if (c.op === 'append') {
      const nos = Array.from({ length: c.records }, () => next++);
      const buffers = nos.map((n) => {
        const b = Buffer.alloc(4);
        b.writeUInt32BE(n);
        return b;
      });
      if (c.track) {
        const promise = writer.append(buffers, nos[0], true, nos.length);
        const t: (typeof tracked)[number] = { nos, promise };
        promise.then(
          () => (t.outcome = 'resolved'),
          () => (t.outcome = 'rejected'),
        );
        tracked.push(t);
      } else writer.append(buffers, nos[0], false, nos.length);
    } else if (c.op === 'fail') file.failNext(c.writes);
    else if (c.op === 'full') file.setFull(true);
    else if (c.op === 'free') file.setFull(false);
    else if (c.op === 'wait') await new Promise((r) => setTimeout(r, c.ms));
    else {
      // flushed() settles, whatever the disk does: it never waits on a writer that is stuck.
      expect(await settlesWithin(writer.flushed(), SETTLE_BOUND_MS)).not.toBe('open');
    }
    checkState(writer);
  }
  // The disk comes back: everything not refused is written, once, in order.
  file.setFull(false);
  file.failNext(0);
  // Under `refuse` a failure is reported until its backoff (at most 8 ms here) has passed.
  if (policy === 'refuse') await new Promise((r) => setTimeout(r, 20));
  expect(await settlesWithin(writer.flushed(), SETTLE_BOUND_MS)).toBe('resolved');
  checkState(writer);
  expect(writer.state).toBe('idle');
  expect(writer.pendingRecords).toBe(0);
  expect(writer.failure).toBeUndefined();
  for (const t of tracked) expect(await settlesWithin(t.promise, SETTLE_BOUND_MS)).not.toBe('open');
  const sorted = [...file.written].sort((a, b) => a - b);
  expect(file.written).toEqual(sorted);
  expect(new Set(file.written).size).toBe(file.written.length);
  expect(writer.writtenRecords).toBe(file.written.length);
  const writtenSet = new Set(file.written);
  if (policy === 'retry') {
    expect(file.written).toEqual(Array.from({ length: next }, (_, i) => i));
    for (const t of tracked) expect(t.outcome).toBe('resolved');
  } else {
    // Refused records were rejected to their sender and never written; accepted ones were written.
    for (const t of tracked) {
      for (const n of t.nos) expect(writtenSet.has(n)).toBe(t.outcome === 'resolved');
    }
  }
  // After recovery the writer still writes, and a stale retry timer (if any) changes nothing.
  await new Promise((r) => setTimeout(r, 10));
  const b = Buffer.alloc(4);
  b.writeUInt32BE(next);
  expect(await settlesWithin(writer.append([b], next, true), SETTLE_BOUND_MS)).toBe('resolved');
  expect(file.written.at(-1)).toBe(next);
  await writer.close();
  expect(writer.state).toBe('closed');
  await expect(writer.append([b], next + 1, true)).rejects.toThrow(/closed/);
}

describe('BatchingWriter states under random failure and recovery schedules', () => {
  for (const policy of ['retry', 'refuse'] as const) {
    it(`${policy}: flushed() always settles, the state is always one of the five and consistent, and after recovery every accepted record is written once, in order`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 30 }), (commands) => runSchedule(policy, commands)),
        { numRuns: 60 },
      );
    }, 120_000);
  }
});
