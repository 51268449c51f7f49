import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ForgottenKeys } from '../../src/assemble/forgotten-keys.ts';

describe('ForgottenKeys: keys let go, as "maybe seen", in bounded memory', () => {
  it('never forgets a key within its capacity (no false negatives)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40 }), { maxLength: 300 }), (keys) => {
        const f = new ForgottenKeys(300);
        keys.forEach((k, i) => f.add([k], i));
        for (const k of keys) expect(f.has(k)).toBe(true);
        expect(f.horizonMs).toBe(-Infinity);
      }),
    );
  });

  it('answers "maybe" for about 1 % of keys never added, at capacity', () => {
    const f = new ForgottenKeys(20_000);
    for (let i = 0; i < 20_000; i++) f.add([`conv-${i}`], i);
    let positives = 0;
    for (let i = 0; i < 20_000; i++) if (f.has(`other-${i}`)) positives++;
    console.log(`forgotten-keys: ${positives} of 20000 unseen keys read as maybe seen at capacity (${((positives / 20_000) * 100).toFixed(2)} %)`);
    expect(positives / 20_000).toBeLessThan(0.02);
    expect(f.has('never-added-at-all')).toBe(f.has('never-added-at-all'));
  });

  it('keeps two generations; dropping the older moves the horizon to the newest close it held', () => {
    const f = new ForgottenKeys(2);
    f.add(['a', 'b'], 10); // generation 1, full
    f.add(['c', 'd'], 20); // generation 2
    expect([f.has('a'), f.has('d'), f.horizonMs]).toEqual([true, true, -Infinity]);
    f.add(['e'], 30); // generation 1 dropped
    expect(f.horizonMs).toBe(10);
    expect([f.has('c'), f.has('e')]).toEqual([true, true]);
  });

  it('with no capacity the horizon is the newest close let go', () => {
    const f = new ForgottenKeys(0);
    f.add(['a'], 5);
    f.add(['b'], 3);
    expect([f.has('a'), f.horizonMs]).toEqual([false, 5]);
    f.raiseHorizon(2);
    expect(f.horizonMs).toBe(5);
    f.raiseHorizon(9);
    expect(f.horizonMs).toBe(9);
  });
});
