import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backoff } from '../../src/storage/backoff.ts';

describe('Backoff (full jitter)', () => {
  it('doubles its ceiling from the first wait, never beyond the maximum, and a success resets it', () => {
    const b = new Backoff(100, 500, () => 1);
    expect([b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([100, 200, 400, 500, 500]);
    b.reset();
    expect(b.next()).toBe(100);
  });

  it('draws each wait from [0, ceiling) with the random source it is given', () => {
    const draws = [0, 0.5, 0.25, 0.999];
    const b = new Backoff(100, 1_000, () => draws.shift()!);
    expect([b.next(), b.next(), b.next(), b.next()]).toEqual([0, 100, 100, 799]);
  });

  it('never waits below zero nor at or above min(maxMs, initialMs · 2ⁿ)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 40 }),
        (initialMs, maxMs, draws) => {
          const queue = [...draws];
          const b = new Backoff(initialMs, maxMs, () => queue.shift()!);
          draws.forEach((_, n) => {
            const ceiling = Math.min(maxMs, initialMs * 2 ** n);
            const ms = b.next();
            expect(ms).toBeGreaterThanOrEqual(0);
            expect(ms).toBeLessThan(ceiling);
          });
        },
      ),
    );
  });

  it('jitters by default: waits differ between two fresh backoffs over enough draws', () => {
    const a = new Backoff(1_000, 1_000_000);
    const b = new Backoff(1_000, 1_000_000);
    const waits = (x: Backoff) => Array.from({ length: 10 }, () => x.next());
    expect(waits(a)).not.toEqual(waits(b));
  });
});
