import { canonicalDigest } from '../../core/digest.ts';
import type { CompositionConflict, Result } from '../result.ts';

/** How `idSet` reads one kind of record. */
export interface IdSetSpec<T, K extends { id: string }> {
  /** The conflict named when an id is reused with another identity. */
  kind: CompositionConflict['kind'];
  /** The record in its normal form: what is kept for its id. */
  normal(item: T): K;
  /** What must be equal for two records of one id to be one record. */
  identity(record: K): unknown;
  /** Folds a later record of the same identity into the kept one; without it, the later one collapses. */
  merge?(kept: K, later: K): void;
}

/**
 * Records as a set, sorted by id: the first of an id is kept in its normal form, a later one of
 * the same identity is merged into it (or collapses), one of another identity is refused with a
 * conflict naming both identity digests, whatever the id's origin. Digests are computed only
 * when an id repeats: the common case (distinct ids) needs none.
 */
export function idSet<T, K extends { id: string }>(items: readonly T[], spec: IdSetSpec<T, K>): Result<K[], CompositionConflict> {
  const byId = new Map<string, K>();
  for (const item of items) {
    const next = spec.normal(item);
    const kept = byId.get(next.id);
    if (kept === undefined) {
      byId.set(next.id, next);
      continue;
    }
    if (kept === next) continue;
    const a = canonicalDigest(spec.identity(kept));
    const b = canonicalDigest(spec.identity(next));
    if (a !== b) return { ok: false, error: { kind: spec.kind, id: next.id, digests: [a, b].sort() as [string, string] } };
    spec.merge?.(kept, next);
  }
  return { ok: true, value: [...byId.keys()].sort().map((id) => byId.get(id)!) };
}
