import { describe, expect, it } from 'vitest';
import { coveredPairs, pairwise } from '../helpers/pairwise.ts';

/** Every pair of levels some combination of the full product holds, by brute force. */
function allPairs(factors: Record<string, readonly string[]>, allowed: (c: Record<string, string>) => boolean): Set<string> {
  const names = Object.keys(factors);
  let combos: Record<string, string>[] = [{}];
  for (const n of names) combos = combos.flatMap((c) => factors[n]!.map((l) => ({ ...c, [n]: l })));
  const pairs = new Set<string>();
  for (const c of combos.filter(allowed)) {
    for (let i = 0; i < names.length; i++) for (let j = i + 1; j < names.length; j++) pairs.add(`${names[i]}=${c[names[i]!]}|${names[j]}=${c[names[j]!]}`);
  }
  return pairs;
}

describe('pairwise', () => {
  it('covers every pair of levels of five three-level factors in far fewer runs than the product (9 to 15 of 243)', () => {
    const factors = { a: ['1', '2', '3'], b: ['1', '2', '3'], c: ['1', '2', '3'], d: ['1', '2', '3'], e: ['1', '2', '3'] };
    const m = pairwise(factors);
    expect(m.fullProduct).toBe(243);
    expect(coveredPairs(factors, m.combinations)).toEqual(allPairs(factors, () => true));
    expect(m.combinations.length).toBeGreaterThanOrEqual(9);
    expect(m.combinations.length).toBeLessThanOrEqual(15);
  });

  it('never picks a combination the constraint refuses, and covers exactly the pairs allowed combinations hold', () => {
    const factors = { judge: ['off', 'on'], walk: ['off', 'on'], sink: ['local', 'kafka', 'otlp'] };
    const allowed = (c: Record<string, string>) => c.walk === 'off' || c.judge === 'on';
    const m = pairwise(factors, allowed);
    expect(m.combinations.every(allowed)).toBe(true);
    // judge=off with walk=on is in no allowed combination: not required, not covered.
    expect(coveredPairs(factors, m.combinations)).toEqual(allPairs(factors, allowed));
    expect(m.pairs).toBe(allPairs(factors, allowed).size);
  });

  it('is deterministic: the same factors give the same list', () => {
    const factors = { x: ['a', 'b'], y: ['a', 'b', 'c'], z: ['a', 'b'] };
    expect(pairwise(factors).combinations).toEqual(pairwise(factors).combinations);
    expect(pairwise({ judge: ['off', 'on'], walk: ['off', 'on'] }, (c) => c.walk === 'off' || c.judge === 'on').combinations).toEqual([
      { judge: 'off', walk: 'off' },
      { judge: 'on', walk: 'off' },
      { judge: 'on', walk: 'on' },
    ]);
  });

  it('refuses a factor without levels and constraints that allow nothing', () => {
    expect(() => pairwise({ a: [] })).toThrow(/factor a has no levels/);
    expect(() => pairwise({ a: ['1'] }, () => false)).toThrow(/allow no combination/);
  });
});
