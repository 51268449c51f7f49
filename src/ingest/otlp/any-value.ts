/**
 * Pieces of the OTLP AnyValue -> {@link AttrValue} mapping shared by the protobuf and JSON
 * decoders, so both produce identical values for the same request.
 */
import type { AttrValue, Attributes } from '../span.ts';

/**
 * Deepest AnyValue nesting (arrays and kvlists inside each other) a decoder accepts. Deeper
 * input makes the whole request a DecodeError: it is hostile or broken, and refusing it
 * keeps the recursive walk far from the stack limit.
 */
export const maxAnyValueDepth = 32;

const twoPow32 = 0x1_0000_0000;

/**
 * An int64 given as its two's-complement 32-bit halves: a number when it is a safe
 * integer, otherwise its exact decimal string.
 */
export function int64FromHalves(low: number, high: number): number | string {
  if (high < 0x0020_0000) return high * twoPow32 + low; // below 2^53: exact as a number
  if (high >= 0xffe0_0000 && (high !== 0xffe0_0000 || low !== 0)) {
    // at or above -(2^53 - 1): negate the two's complement without leaving the safe range
    return -((0xffff_ffff - high) * twoPow32 + (twoPow32 - low));
  }
  return BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low)).toString();
}

/** An int64 given as an exact bigint, mapped like {@link int64FromHalves}. */
export function int64FromBigInt(value: bigint): number | string {
  const asNumber = Number(value);
  return Number.isSafeInteger(asNumber) ? asNumber : value.toString();
}

/**
 * Sets `key` on an attribute object as an own data property. A plain assignment of
 * `__proto__` would replace the prototype instead of storing the attribute.
 */
export function setAttribute(target: Attributes | { [key: string]: AttrValue }, key: string, value: AttrValue): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}
