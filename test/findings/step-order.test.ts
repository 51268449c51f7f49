import { describe, expect, it } from 'vitest';
import { inStepOrder, rootStep } from '../../src/findings/step-order.ts';
import { step, TRACE_A, TRACE_B } from './trajectory-fixture.ts';

describe('step order', () => {
  const a = step({ id: '0000000000000001', traceId: TRACE_B, startTimeUnixNano: 10n, endTimeUnixNano: 20n });
  const b = step({ id: '0000000000000001', traceId: TRACE_A, startTimeUnixNano: 10n, endTimeUnixNano: 20n });
  const c = step({ id: '0000000000000002', traceId: TRACE_A, startTimeUnixNano: 5n, endTimeUnixNano: 30n });

  it('returns steps already in order as they are, without a copy', () => {
    const sorted = [c, b, a];
    expect(inStepOrder(sorted)).toBe(sorted);
  });

  it('sorts a copy otherwise, ties on times broken by trace id then span id', () => {
    const shuffled = [a, b, c];
    expect(inStepOrder(shuffled)).toEqual([c, b, a]);
    expect(shuffled).toEqual([a, b, c]);
  });

  it('takes the first parentless step in that order as the root', () => {
    const child = step({ id: '0000000000000003', parentId: '0000000000000001', startTimeUnixNano: 1n, endTimeUnixNano: 2n });
    expect(rootStep([a, child, b])).toBe(b);
  });
});
