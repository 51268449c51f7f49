import { z } from 'zod';

/**
 * An integer configuration key: at least `min`, `fallback` when absent — the shape of most
 * bounds (counts, bytes, milliseconds), so a section reads as its names and numbers.
 *
 * @example maxBufferedBytes: intKey(1, 256 * 1024 * 1024)
 */
export function intKey(min: number, fallback: number) {
  return z.number().int().min(min).default(fallback);
}
