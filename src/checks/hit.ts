/**
 * A fired L0 pattern: a candidate, never a verdict. Shape of the seed's `codeEvalHits`. `P` is
 * the pattern id: a check's own file spells its literal, so this type needs no registry.
 */
export interface CodeEvalHit<P extends string = string> {
  pattern: P;
  /** The step id (span id) the hit is anchored at. */
  anchor: string;
  /** A short, deterministic description of what matched. */
  detail: string;
}

export interface PatternHit<P extends string = string> extends CodeEvalHit<P> {
  /** Every step the hit rests on, anchor first, as `{traceId, spanId}`. */
  evidence: { traceId: string; spanId: string }[];
}
