import { describe, expect, it } from 'vitest';
import { PositionLedger } from '../../src/pipeline/position-ledger.ts';

/** A flush the test completes by hand: each call waits for the next `complete()`/`fail()`. */
function manualFlush() {
  const waiting: { resolve: () => void; reject: (err: Error) => void }[] = [];
  return {
    calls: () => waiting.length,
    flushed: () => new Promise<void>((resolve, reject) => waiting.push({ resolve, reject })),
    complete: () => waiting.splice(0).forEach((w) => w.resolve()),
    fail: () => waiting.splice(0).forEach((w) => w.reject(new Error('disk full'))),
  };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('PositionLedger', () => {
  it('commits past every accepted record when nothing is held, per partition', () => {
    const ledger = new PositionLedger({ flushed: async () => {} });
    ledger.accepted({ partition: 0, offset: 4 });
    ledger.accepted({ partition: 0, offset: 2 });
    ledger.accepted({ partition: 3, offset: 0 });
    ledger.accepted(undefined);
    expect(ledger.committable()).toEqual(
      new Map([
        [0, 5],
        [3, 1],
      ]),
    );
  });

  it("holds a closed trajectory's positions until its output is durable, then commits past them", async () => {
    const flush = manualFlush();
    const ledger = new PositionLedger({ flushed: flush.flushed });
    ledger.accepted({ partition: 0, offset: 7 });
    ledger.holdUntilDurable(new Map([[0, 7]]));
    expect(ledger.committable()).toEqual(new Map([[0, 7]]));
    const settled = ledger.settled();
    await turn();
    flush.complete();
    await settled;
    expect(ledger.committable()).toEqual(new Map([[0, 8]]));
  });

  it('keeps positions held while the outputs fail, and settles once a later flush succeeds', async () => {
    const flush = manualFlush();
    const ledger = new PositionLedger({ flushed: flush.flushed, retryMs: 1 });
    ledger.accepted({ partition: 1, offset: 0 });
    ledger.holdUntilDurable(new Map([[1, 0]]));
    await turn();
    flush.fail();
    await new Promise((r) => setTimeout(r, 10));
    expect(ledger.committable()).toEqual(new Map([[1, 0]]));
    expect(flush.calls()).toBe(1);
    flush.complete();
    await ledger.settled();
    expect(ledger.committable()).toEqual(new Map([[1, 1]]));
  });

  it("folds what open trajectories hold (the assembler's) into the committable offset", () => {
    const ledger = new PositionLedger({ flushed: async () => {}, heldOpen: (floor) => floor.set(0, 2) });
    ledger.accepted({ partition: 0, offset: 9 });
    expect(ledger.committable()).toEqual(new Map([[0, 2]]));
  });

  it('holds a position while the judge holds it, then until the manifest written after it is durable', async () => {
    const flush = manualFlush();
    const ledger = new PositionLedger({ flushed: flush.flushed });
    let release!: (part: string) => void;
    const part = new Promise<string>((r) => (release = r));
    const written: string[] = [];
    ledger.accepted({ partition: 0, offset: 3 });
    ledger.holdWhileJudged(new Map([[0, 3]]), part, (p) => written.push(p));
    let settled = false;
    const done = ledger.settled().then(() => (settled = true));
    await turn();
    expect(ledger.committable()).toEqual(new Map([[0, 3]]));
    expect(flush.calls()).toBe(0);
    release('manifest');
    await turn();
    expect(written).toEqual(['manifest']);
    // Written, not yet durable: still held.
    expect(ledger.committable()).toEqual(new Map([[0, 3]]));
    expect(settled).toBe(false);
    flush.complete();
    await done;
    expect(ledger.committable()).toEqual(new Map([[0, 4]]));
  });

  it("releases a forwarded trajectory's positions once the forward is acknowledged, with no flush", async () => {
    const flush = manualFlush();
    const ledger = new PositionLedger({ flushed: flush.flushed });
    let ack!: () => void;
    ledger.accepted({ partition: 2, offset: 5 });
    ledger.holdUntilAcknowledged(new Map([[2, 5]]), new Promise<void>((r) => (ack = r)));
    expect(ledger.committable()).toEqual(new Map([[2, 5]]));
    ack();
    await ledger.judged();
    expect(ledger.committable()).toEqual(new Map([[2, 6]]));
    expect(flush.calls()).toBe(0);
  });

  it('forgets dropped partitions: their offsets and holds, while other partitions stay held', async () => {
    const flush = manualFlush();
    const ledger = new PositionLedger({ flushed: flush.flushed });
    ledger.accepted({ partition: 0, offset: 1 });
    ledger.accepted({ partition: 1, offset: 1 });
    ledger.holdUntilDurable(new Map([[0, 1]]));
    ledger.holdWhileJudged(
      new Map([
        [0, 0],
        [1, 1],
      ]),
      new Promise<void>(() => {}),
      () => {},
    );
    ledger.dropPartitions(new Set([0]));
    expect(ledger.committable()).toEqual(new Map([[1, 1]]));
    ledger.accepted({ partition: 0, offset: 4 });
    expect(ledger.committable()).toEqual(
      new Map([
        [0, 5],
        [1, 1],
      ]),
    );
  });
});
