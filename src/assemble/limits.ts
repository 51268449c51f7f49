import { z } from 'zod';
import { intKey } from '../config/int-key.ts';

/** Every bound of the assembler, named with its unit. */
export const AssemblerLimitsSchema = z
  .object({
    /** After the root span ended, close once no span arrived for this long. */
    quietPeriodMs: intKey(0, 2_000),
    /** Without a root span, close once no span arrived for this long. */
    idleTimeoutMs: intKey(1, 30_000),
    /** Admission bound: at or above it, new requests are answered 503 with Retry-After. */
    maxOpenTrajectories: intKey(1, 10_000),
    /** A trajectory reaching this many spans closes at once as incomplete (`span-limit`). */
    maxSpansPerTrajectory: intKey(1, 10_000),
    /** Admission bound on the encoded bytes of all buffered spans. */
    maxBufferedBytes: intKey(1, 256 * 1024 * 1024),
    /** How long a closed trajectory is kept so a late span re-emits it whole as a new revision. */
    lateSpanWindowMs: intKey(0, 60_000),
    /** Bound on the encoded bytes of closed trajectories kept for late spans. */
    maxRetainedBytes: intKey(0, 64 * 1024 * 1024),
    /** Bound on keys remembered (for revision numbers) after their steps were let go. */
    maxRememberedKeys: intKey(0, 100_000),
    /**
     * Bound on spans remembered by id hash and fingerprint (16 bytes each) after their steps were let go, so a
     * late exact duplicate export is still recognized and not a new revision: 1,000,000 is 16 MiB.
     */
    maxRememberedSpanDigests: intKey(0, 1_000_000),
    /**
     * Keys let go at `maxRememberedKeys` stay known as "maybe seen" in a fingerprint filter of
     * this many keys (two generations of 10 bits a key, so 2.5 MB at 1,000,000): a span of one
     * opens a `previous-revision-unknown` revision. Past it, a span that started before the
     * newest close the filter dropped does (docs/reliability.md, "Forgotten keys and restarts").
     */
    maxForgottenKeys: intKey(0, 1_000_000),
  })
  .strict();

export type AssemblerLimits = z.infer<typeof AssemblerLimitsSchema>;
