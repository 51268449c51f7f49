const NANOS_PER_MILLI = 1_000_000n;
const NANOS_PER_SECOND = 1_000_000_000n;

/**
 * ISO-8601 UTC with nine fractional digits, from nanoseconds since the epoch:
 * `1700000000123456789n` → `2023-11-14T22:13:20.123456789Z`. Fixed width, so these strings
 * sort in time order. Times come from spans, never from the clock.
 */
export function isoFromUnixNano(ns: bigint): string {
  const nanos = ((ns % NANOS_PER_SECOND) + NANOS_PER_SECOND) % NANOS_PER_SECOND;
  const second = ns - nanos;
  // The times of one trajectory mostly share their second: format it once.
  if (second !== lastSecond) {
    lastSecond = second;
    lastPrefix = new Date(Number(second / NANOS_PER_MILLI)).toISOString().slice(0, 19);
  }
  return `${lastPrefix}.${nanos.toString().padStart(9, '0')}Z`;
}

let lastSecond: bigint | undefined;
let lastPrefix = '';

/** The pattern `isoFromUnixNano` produces. */
export const ISO_NANO_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/;
