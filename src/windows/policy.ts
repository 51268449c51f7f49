import { z } from 'zod';
import { canonicalDigest } from '../core/digest.ts';
import { WINDOW_KINDS, type WindowKind } from './window.ts';

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
        /**
         * Window kinds from larger to smaller, for the judge (`fitWindows`, judge/window-fit.ts): a
         * window that does not fit — over `maxEventsPerWindow`, `maxBytesPerWindow`,
         * `maxRequestBytes` or the model's context (`judge.client.contextTokens`) — is built again
         * at the same anchor as each kind after its own in this list (and in `kinds`) until one
         * fits; none fits, it is refused. Never truncated. `[]`: refused at once.
         */
        fallback: z
          .array(z.enum(WINDOW_KINDS))
          .default(['agent', 'turn', 'event'])
          .refine((kinds) => new Set(kinds).size === kinds.length, { message: 'lists a kind twice' }),
      })
      .prefault({}),
  })
  .prefault({});

export type WindowPolicy = z.infer<typeof WindowPolicySchema>;

/**
 * sha256 hex of the policy's canonical JSON, without `fallback`: the fallback decides which of
 * the windows the policy builds is judged for a request, never what a window of a kind holds
 * (like `judge.sampling`, which stays out too), so window ids, ledger keys and certificates
 * stand when it changes.
 */
export function windowPolicyDigest(policy: WindowPolicy): string {
  const { fallback: _fallback, ...config } = policy.config;
  return canonicalDigest({ name: policy.name, version: policy.version, config });
}

/** The kinds a window of `kind` that does not fit is built as next, in order: those after it in `fallback` that `kinds` allows. */
export function smallerKinds(policy: WindowPolicy, kind: WindowKind): WindowKind[] {
  const at = policy.config.fallback.indexOf(kind);
  if (at < 0) return [];
  return policy.config.fallback.slice(at + 1).filter((k) => policy.config.kinds.includes(k));
}
