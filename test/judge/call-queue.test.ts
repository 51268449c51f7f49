import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallQueue } from '../../src/judge/call-queue.ts';

/** A job whose run resolves when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe('call queue', () => {
  it('runs at most maxConcurrent jobs at once, in push order, and starts the next when one ends', async () => {
    const gates = [gate(), gate(), gate()];
    const started: number[] = [];
    const q = new CallQueue<number>(
      2,
      async (n) => {
        started.push(n);
        await gates[n]!.opened;
      },
      () => undefined,
    );
    [0, 1, 2].forEach((n) => q.push(n));
    q.pump();
    expect(started).toEqual([0, 1]);
    expect([q.inFlight, q.length]).toEqual([2, 1]);
    gates[1]!.open();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.open();
    gates[2]!.open();
    await q.drain();
    expect([q.inFlight, q.length]).toEqual([0, 0]);
  });

  it('when halted dispatches nothing more, and stop hands back the jobs that never started', async () => {
    const g = gate();
    const started: string[] = [];
    const q = new CallQueue<string>(
      1,
      async (j) => {
        started.push(j);
        await g.opened;
      },
      () => undefined,
    );
    ['a', 'b', 'c'].forEach((j) => q.push(j));
    q.pump();
    q.halt();
    g.open();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a']);
    expect(q.stop()).toEqual(['b', 'c']);
    await q.drain();
    expect(q.length).toBe(0);
  });

  it('tells onFailure of a job that rejected, frees its slot, and drain waits for tracked work', async () => {
    const failed: [string, string][] = [];
    const q = new CallQueue<string>(
      1,
      async (j) => {
        if (j === 'bad') throw new Error('boom');
      },
      (j, err) => failed.push([j, (err as Error).message]),
    );
    let trackedDone = false;
    q.track(new Promise<void>((r) => setTimeout(() => ((trackedDone = true), r()), 20)));
    q.push('bad');
    q.push('good');
    q.pump();
    await q.drain();
    expect(failed).toEqual([['bad', 'boom']]);
    expect(trackedDone).toBe(true);
    expect(q.inFlight).toBe(0);
  });

  it('never runs more than maxConcurrent, starts jobs in push order and runs every one (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 25 }), async (max, delays) => {
        let running = 0;
        let most = 0;
        const started: number[] = [];
        const q = new CallQueue<number>(
          max,
          async (n) => {
            started.push(n);
            most = Math.max(most, ++running);
            await new Promise((r) => setTimeout(r, delays[n]));
            running--;
          },
          () => undefined,
        );
        // Pushed in bursts, as trajectories close: pump after each.
        delays.forEach((_, n) => {
          q.push(n);
          if (n % 3 === 2) q.pump();
        });
        q.pump();
        await q.drain();
        expect(most).toBeLessThanOrEqual(max);
        expect(started).toEqual(delays.map((_, n) => n));
      }),
      { numRuns: 30 },
    );
  });
});
