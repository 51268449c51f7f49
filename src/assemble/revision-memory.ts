import { z } from 'zod';
import type { Inherited } from './revision-inheritance.ts';
import { SpanDigests } from './span-digests.ts';
import type { IncompleteReason } from './trajectory.ts';

/**
 * What a restart needs of one closed revision to go on from it: its key and number, what
 * later revisions inherit, its traces (so their spans find the key), the partitions that fed
 * it, the digests of every span it and the revisions before it held (so an exact re-send is
 * still a duplicate) and when it closed (on the assembler's clock).
 */
export interface RememberedRevision {
  key: string;
  revision: number;
  inherited: Inherited;
  traceIds: string[];
  partitions: number[] | undefined;
  digests: SpanDigests | undefined;
  closedAtMs: number;
}

/** Where the assembler tells of each closed revision, so it outlives the process (`sinks/revision-memory-sink.ts`). */
export interface RevisionMemory {
  closed(r: RememberedRevision): void;
}

const ConflictSchema = z.strictObject({ traceId: z.string(), spanId: z.string(), keptDigest: z.string(), refusedDigest: z.string() });
const SessionConflictSchema = z.strictObject({ traceId: z.string(), spanId: z.string(), sessionIds: z.tuple([z.string(), z.string()]) });
const LineSchema = z.strictObject({
  /** The line's number in the log: numbers the segments, and a gap before the first says the log was cut. */
  n: z.number().int().min(0),
  key: z.string().min(1),
  revision: z.number().int().min(1),
  closedAtMs: z.number(),
  traceIds: z.array(z.string()),
  partitions: z.array(z.number().int()).optional(),
  digests: z.string().optional(),
  inherited: z.strictObject({
    // A reason this build does not know still makes the capture incomplete: kept as read.
    reasons: z.array(z.string()),
    reasonsWithoutSteps: z.array(z.string()),
    conflicts: z.array(ConflictSchema),
    sessionConflicts: z.array(SessionConflictSchema),
    refusedSpans: z.number().int().min(0),
  }),
});

/** One line of the revision memory log (JSON, no newline). */
export function encodeRemembered(r: RememberedRevision, n: number): string {
  return JSON.stringify({
    n,
    key: r.key,
    revision: r.revision,
    closedAtMs: r.closedAtMs,
    traceIds: r.traceIds,
    ...(r.partitions === undefined ? {} : { partitions: r.partitions }),
    ...(r.digests === undefined || r.digests.size === 0 ? {} : { digests: r.digests.toBase64() }),
    inherited: r.inherited,
  });
}

/** A parsed line back, with its number; undefined when it is not one (damage, in the log's terms). */
export function parseRemembered(value: unknown): { n: number; revision: RememberedRevision } | undefined {
  const parsed = LineSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const line = parsed.data;
  const digests = line.digests === undefined ? undefined : SpanDigests.fromBase64(line.digests);
  if (line.digests !== undefined && digests === undefined) return undefined;
  return {
    n: line.n,
    revision: {
      key: line.key,
      revision: line.revision,
      closedAtMs: line.closedAtMs,
      traceIds: line.traceIds,
      partitions: line.partitions,
      digests,
      inherited: {
        ...line.inherited,
        reasons: line.inherited.reasons as IncompleteReason[],
        reasonsWithoutSteps: line.inherited.reasonsWithoutSteps as IncompleteReason[],
      },
    },
  };
}
