import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ISO_NANO_PATTERN, isoFromUnixNano } from '../../src/core/time.ts';

/** The definition, written out without the one-second cache. */
function reference(ns: bigint): string {
  const nanos = ((ns % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n;
  const whole = new Date(Number((ns - nanos) / 1_000_000n)).toISOString();
  return `${whole.slice(0, 19)}.${nanos.toString().padStart(9, '0')}Z`;
}

describe('isoFromUnixNano', () => {
  it('writes nine fractional digits in UTC', () => {
    expect(isoFromUnixNano(1_700_000_000_123_456_789n)).toBe('2023-11-14T22:13:20.123456789Z');
    expect(isoFromUnixNano(0n)).toBe('1970-01-01T00:00:00.000000000Z');
    expect(isoFromUnixNano(-1n)).toBe('1969-12-31T23:59:59.999999999Z');
  });

  it('agrees with the definition for any sequence of times, within and across seconds', () => {
    const second = fc.bigInt({ min: -2_000_000_000n, max: 4_000_000_000n }).map((s) => s * 1_000_000_000n);
    const time = fc.tuple(second, fc.bigInt({ min: 0n, max: 999_999_999n })).map(([s, n]) => s + n);
    fc.assert(
      fc.property(fc.array(time, { minLength: 1, maxLength: 8 }), (times) => {
        // Each time twice in a row and in between others: the cached second must never leak.
        for (const t of [...times, ...times.toReversed(), ...times]) {
          const iso = isoFromUnixNano(t);
          expect(iso).toBe(reference(t));
          if (t >= 0n) expect(iso).toMatch(ISO_NANO_PATTERN);
        }
      }),
    );
  });
});
