import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortSmall } from '../../src/core/sort-small.ts';

describe('sortSmall', () => {
  it('sorts in place exactly as a stable Array#sort does, short and long arrays alike', () => {
    // Pairs compared by their first member only, so stability shows in the second.
    const byFirst = (a: [number, number], b: [number, number]) => a[0] - b[0];
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer()), { maxLength: 40 }), (items) => {
        const expected = [...items].sort(byFirst);
        const copy = [...items];
        expect(sortSmall(copy, byFirst)).toBe(copy);
        expect(copy).toEqual(expected);
      }),
    );
  });
});
