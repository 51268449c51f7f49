import { z } from 'zod';

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * What a judge call reserves in the ledger for its result line beyond the intent line (whose
 * size is known at admission). A result holds eight answers, the receipt of at most eleven
 * attempts and a failure message of at most a few hundred bytes: measured 3–6 KiB. A result
 * larger than its reserve is still written — it was paid for and replay needs it — so the file
 * can pass `maxBytes` by at most that excess.
 */
export const RESULT_RESERVE_BYTES = 16 * KIB;

/**
 * Named bounds of the judge ledger (`judge.ledger`), in bytes of the file `ledger.jsonl`.
 *
 * - `compactAtBytes`: when the file would pass it and compaction would reclaim enough (see
 *   `compactionDue`), the ledger is rewritten with only what replay needs.
 * - `maxBytes`: the file's bound. Lines replay needs (intents and results) are never deleted;
 *   a new judge call is admitted only while those lines, the calls already admitted and its
 *   own reserve fit under it — else it is deferred `ledger-full`. An audit line (`refused` /
 *   `deferred`) that would pass it is not written, and counted (`stats().ledger.skipsNotRecorded`):
 *   the manifest is the durable record of that fate.
 */
export const LedgerBoundsSchema = z
  .strictObject({
    /** The ledger file's bound, in bytes. */
    maxBytes: z
      .int()
      .min(64 * KIB)
      .default(256 * MIB),
    /** The file size, in bytes, from which audit lines are compacted away. */
    compactAtBytes: z
      .int()
      .min(4 * KIB)
      .default(64 * MIB),
  })
  .refine((b) => b.compactAtBytes <= b.maxBytes, { path: ['compactAtBytes'], message: 'must not exceed ledger.maxBytes' })
  .prefault({});

export type LedgerBounds = z.infer<typeof LedgerBoundsSchema>;

/** The ledger's size as the rules below see it. */
export interface LedgerSize {
  /** The file's size. */
  bytes: number;
  /** Bytes of intent and result lines: what compaction keeps. */
  liveBytes: number;
}

/**
 * Whether to compact before writing a line of `need` bytes. Either the file would pass
 * `compactAtBytes` and compaction would reclaim at least half of the larger of that threshold
 * and the live part — so the bytes rewritten are at most about twice the bytes reclaimed, and
 * a ledger whose live part is large is not rewritten on every append — or the file would pass
 * `maxBytes` and at least half of `compactAtBytes` can be reclaimed (near full, reclaiming
 * beats refusing audit lines). Pure.
 */
export function compactionDue(s: LedgerSize, need: number, b: LedgerBounds): boolean {
  const reclaimable = s.bytes - s.liveBytes;
  if (s.bytes + need > b.compactAtBytes && reclaimable >= Math.max(b.compactAtBytes, s.liveBytes) / 2) return true;
  return s.bytes + need > b.maxBytes && reclaimable >= b.compactAtBytes / 2;
}

/** Whether a line replay needs may only be written after compacting: it would pass `maxBytes` and there is something to reclaim. Pure. */
export function compactionNeeded(s: LedgerSize, need: number, b: LedgerBounds): boolean {
  return s.bytes + need > b.maxBytes && s.bytes > s.liveBytes;
}

/** Whether a new call of `callBytes` (intent line + result reserve) fits beside the live lines and the calls already reserved. Pure. */
export function roomForCall(liveBytes: number, reservedBytes: number, callBytes: number, b: LedgerBounds): boolean {
  return liveBytes + reservedBytes + callBytes <= b.maxBytes;
}
