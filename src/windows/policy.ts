import { z } from 'zod';
import { canonicalDigest } from '../core/digest.ts';
import { WINDOW_KINDS } from './window.ts';

/**
 * The extraction policy: named, versioned, and everything that changes what a window contains
 * in `config`. Its digest is part of every calibration identity, so a changed extraction
 * invalidates certificates issued under the old one.
 */
export const WindowPolicySchema = z
  .strictObject({
    name: z.string().min(1).default('trajwatch-default'),
    version: z.string().min(1).default('1'),
    config: z
      .strictObject({
        /** Steps on each side of the anchor in an event window. */
        eventContextSteps: z.int().min(0).max(64).default(2),
        /** A window with more events than this is refused, never truncated. */
        maxEventsPerWindow: z.int().min(1).max(10_000).default(32),
        /** Bytes of the window's canonical JSON (events included) above which it is refused. */
        maxBytesPerWindow: z
          .int()
          .min(256)
          .default(48 * 1024),
        /** Windows asked for beyond this many per trajectory revision are refused. */
        maxWindowsPerTrajectory: z.int().min(1).max(1_000).default(4),
        /** Bytes of one judge request body (all questions, all events) above which it is refused. */
        maxRequestBytes: z
          .int()
          .min(512)
          .default(64 * 1024),
        /** Which window kinds may be built. */
        kinds: z
          .array(z.enum(WINDOW_KINDS))
          .min(1)
          .default([...WINDOW_KINDS]),
      })
      .prefault({}),
  })
  .prefault({});

export type WindowPolicy = z.infer<typeof WindowPolicySchema>;

/** sha256 hex of the policy's canonical JSON. */
export function windowPolicyDigest(policy: WindowPolicy): string {
  return canonicalDigest({ name: policy.name, version: policy.version, config: policy.config });
}
