import { z } from 'zod';

const MiB = 1024 * 1024;

/**
 * The closed-revision memory on disk (`<dataDir>/revisions`, serve only): one JSON line per
 * closed revision, replayed at start, so a re-sent span after a restart is a duplicate or a
 * late span, never a new revision 1. Bounded like a local log: closed segments beyond
 * `maxBytes` (or older than `maxAgeHours`) go, oldest first, and what they held is then below
 * the memory's horizon (docs/reliability.md, "Forgotten keys and restarts").
 */
export const RevisionMemoryConfigSchema = z
  .strictObject({
    /**
     * Off: the memory is in-process only, as before it existed — after a restart a re-sent span
     * opens a first revision again, which may claim absences. For tests of what a rebuilt
     * trajectory does; never where senders re-send.
     */
    enabled: z.boolean().default(true),
    maxBytes: z
      .number()
      .int()
      .min(16 * 1024)
      .default(128 * MiB),
    segmentBytes: z
      .number()
      .int()
      .min(4096)
      .default(8 * MiB),
    maxAgeHours: z.number().positive().optional(),
  })
  .refine((r) => r.segmentBytes * 2 <= r.maxBytes, { message: 'segmentBytes must be at most half of maxBytes', path: ['segmentBytes'] });

export type RevisionMemoryConfig = z.infer<typeof RevisionMemoryConfigSchema>;
