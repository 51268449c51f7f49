import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OldestFirst } from '../../src/assemble/oldest-first.ts';

describe('OldestFirst: a Map read oldest first', () => {
  it('gives the same oldest entry, size and order as a plain Map under any sequence of set, delete and oldest', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.nat(12), value: fc.nat() }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.nat(12) }),
      fc.record({ kind: fc.constant('delete-oldest' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const model = new Map<number, number>();
        const map = new OldestFirst<number, number>();
        for (const o of ops) {
          if (o.kind === 'set') {
            model.set(o.key, o.value);
            map.set(o.key, o.value);
          } else if (o.kind === 'delete') {
            expect(map.delete(o.key)).toBe(model.delete(o.key));
          } else {
            const first = model.entries().next();
            expect(map.oldest()).toEqual(first.done === true ? undefined : first.value);
            if (first.done !== true) {
              model.delete(first.value[0]);
              map.delete(first.value[0]);
            }
          }
          const first = model.entries().next();
          expect(map.oldest()).toEqual(first.done === true ? undefined : first.value);
          expect(map.size).toBe(model.size);
        }
        expect([...map.entries()]).toEqual([...model.entries()]);
      }),
      { numRuns: 300 },
    );
  });
});
