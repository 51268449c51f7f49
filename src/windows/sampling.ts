import { sha256Bytes } from '../core/digest.ts';
import { z } from 'zod';

/** How trajectories are picked for judging beyond the triggers. */
export const SamplingSchema = z
  .strictObject({
    /** Fraction of trajectories sampled regardless of triggers, decided by hash (0 = none). */
    rate: z.number().min(0).max(1).default(0.05),
    /** Any string; changing it picks a different deterministic sample. */
    salt: z.string().default(''),
    triggers: z
      .strictObject({
        /** An event window at every L0 hit's anchor. */
        l0Hit: z.boolean().default(true),
        /** An event window at every outbound action. */
        outbound: z.boolean().default(true),
        /** A turn window ending at the terminal step. */
        terminal: z.boolean().default(true),
      })
      .prefault({}),
  })
  .prefault({});

export type Sampling = z.infer<typeof SamplingSchema>;

/**
 * Whether a trajectory falls in the deterministic sample: the first 8 bytes of
 * sha256(key, policy digest, salt) read as a fraction in [0, 1), compared with `rate`. The
 * same trajectory and policy give the same answer on every machine and every replay.
 */
export function sampledByRate(trajectoryKey: string, policyDigest: string, sampling: Pick<Sampling, 'rate' | 'salt'>): boolean {
  if (sampling.rate <= 0) return false;
  if (sampling.rate >= 1) return true;
  const h = sha256Bytes(`${trajectoryKey}\u0000${policyDigest}\u0000${sampling.salt}`);
  const fraction = Number(h.readBigUInt64BE(0) >> 11n) / 2 ** 53;
  return fraction < sampling.rate;
}
