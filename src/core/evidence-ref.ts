import { z } from 'zod';

export const EVIDENCE_KINDS = ['span', 'event', 'artifact', 'finding', 'metric'] as const;

/**
 * A pointer to what a finding or a provenance reading rests on. Span URIs are
 * `span:<traceId>/<spanId>`; span-event URIs are `event:<traceId>/<spanId>/<eventIndex>`.
 */
export const EvidenceRefSchema = z
  .object({
    kind: z.enum(EVIDENCE_KINDS),
    uri: z.string().min(1),
    excerpt: z.string().optional(),
  })
  .strict();

export type EvidenceRef = z.infer<typeof EvidenceRefSchema>;

/** `span:<traceId>/<spanId>`. */
export function spanUri(traceId: string, spanId: string): string {
  return `span:${traceId}/${spanId}`;
}

/** `event:<traceId>/<spanId>/<eventIndex>`: the index-th event of that span. */
export function eventUri(traceId: string, spanId: string, eventIndex: number): string {
  return `event:${traceId}/${spanId}/${eventIndex}`;
}

export function spanRef(traceId: string, spanId: string): EvidenceRef {
  return { kind: 'span', uri: spanUri(traceId, spanId) };
}
