import { z } from 'zod';

/** Embedded defaults of one log's retention. */
export interface RetentionDefaults {
  maxBytes: number;
  segmentBytes: number;
}

/**
 * The retention keys of one log, strict: `maxBytes` (what its files may hold), `maxAgeHours`
 * (closed segments older than this go; absent: no age limit) and `segmentBytes` (when the
 * active file is closed). A segment must fit at least twice under `maxBytes`, or the log could
 * not keep a closed segment beside the active one.
 */
export function logRetentionSchema(defaults: RetentionDefaults) {
  return z
    .strictObject({
      maxBytes: z
        .number()
        .int()
        .min(16 * 1024)
        .default(defaults.maxBytes),
      maxAgeHours: z.number().positive().optional(),
      segmentBytes: z.number().int().min(4096).default(defaults.segmentBytes),
    })
    .refine((r) => r.segmentBytes * 2 <= r.maxBytes, {
      message: 'segmentBytes must be at most half of maxBytes',
      path: ['segmentBytes'],
    });
}

export type LogRetention = z.infer<ReturnType<typeof logRetentionSchema>>;
