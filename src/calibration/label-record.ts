import { z } from 'zod';
import { GoldRowSchema } from './calibrate.ts';

/** The format of a gold row written by `trajwatch label`. */
export const LABEL_FORMAT = 'trajwatch.label/1';

/** A labeler id: short, printable, no spaces, so it can be a `source` in every report. */
export const LabelerSchema = z.string().regex(/^[A-Za-z0-9._@+-]{1,64}$/, 'must be 1–64 of A–Z a–z 0–9 . _ @ + -');

/**
 * One label as `trajwatch label` appends it to the gold file: a gold row (what `trajwatch
 * calibrate` reads) with every provenance field present. `source` is the labeler.
 * `support` is the event id the labeler chose as supporting their answer, `unresolved`, or
 * null when they gave none. `windowDigest` is the digest of the window content they saw (the
 * ledger's `digests.state`), so a label cannot silently move to other content.
 */
export const LabelRowSchema = GoldRowSchema.extend({
  format: z.literal(LABEL_FORMAT),
  labeler: LabelerSchema,
  labeledAt: z.iso.datetime(),
  support: z.string().min(1).nullable(),
  windowDigest: z.string().regex(/^[0-9a-f]{64}$/),
}).refine((r) => r.source === r.labeler, { message: 'source must equal labeler', path: ['source'] });
export type LabelRow = z.infer<typeof LabelRowSchema>;

/** What a labeler submits (the page's POST body). */
export const LabelInputSchema = z.strictObject({
  windowId: z.string().min(1),
  questionId: z.string().min(1),
  label: z.enum(['yes', 'no', 'unsure', 'unavailable']),
  support: z.string().min(1).nullable(),
  labeler: LabelerSchema,
  /** This labeler's earlier label of the question on the window was mis-keyed: this one supersedes it (a new line; the old one stays). */
  correction: z.boolean().optional(),
});
export type LabelInput = z.infer<typeof LabelInputSchema>;
