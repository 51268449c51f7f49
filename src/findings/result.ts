/** A value or the reason there is none: what the pure findings code returns instead of throwing. */
export type Result<T, E> = { ok: true; value: T } | { ok: false; error: E };

/**
 * Two records share an id but not their content. The id names an immutable record, so the
 * second one is refused rather than silently replacing or merging with the first.
 */
export interface CompositionConflict {
  kind: 'bundle-id-conflict' | 'snapshot-id-conflict';
  id: string;
  /** Digests of the two differing contents, sorted. */
  digests: [string, string];
}
