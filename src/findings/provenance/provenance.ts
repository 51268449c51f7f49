import type { CompositionConflict, Result } from '../result.ts';
import { normalizeSnapshots, type Snapshot } from './conditions.ts';
import { normalizeBundles, type Bundle } from './treatment.ts';

/**
 * Under which treatment and conditions a trajectory was observed. `null` = unavailable
 * (not captured, or refused after a conflict); `[]` = captured and none applied.
 */
export interface Provenance {
  treatment: Bundle[] | null;
  conditions: Snapshot[] | null;
}

/** No provenance at all: what a finding carries when nothing was captured. */
export const NO_PROVENANCE: Provenance = { treatment: null, conditions: null };

/**
 * Normalize both lists as sets (sorted, duplicates collapsed); `null` stays `null`. Refuses an
 * id reused with different content, as a value.
 */
export function normalizeProvenance(p: Provenance): Result<Provenance, CompositionConflict> {
  let treatment: Bundle[] | null = null;
  if (p.treatment !== null) {
    const r = normalizeBundles(p.treatment);
    if (!r.ok) return r;
    treatment = r.value;
  }
  let conditions: Snapshot[] | null = null;
  if (p.conditions !== null) {
    const r = normalizeSnapshots(p.conditions);
    if (!r.ok) return r;
    conditions = r.value;
  }
  return { ok: true, value: { treatment, conditions } };
}
