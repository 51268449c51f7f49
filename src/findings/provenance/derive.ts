import type { Trajectory } from '../../assemble/trajectory.ts';
import type { ProvenanceConfig } from './config.ts';
import type { ProvenanceIssue } from './issue.ts';
import type { Provenance } from './provenance.ts';
import { readConditions } from './read-conditions.ts';
import { readTreatment } from './read-treatment.ts';
import { normalizeBundles } from './treatment.ts';
import { normalizeSnapshots } from './conditions.ts';

/** Provenance for one trajectory, normalized, with every refused input recorded. */
export interface DerivedProvenance extends Provenance {
  issues: ProvenanceIssue[];
}

/**
 * Treatment and conditions for a trajectory, from the treatments config and the telemetry
 * itself. Pure. A list whose ids conflict is refused as a whole — it becomes `null`
 * (unavailable) with a `*-id-conflict` issue — because keeping either record would be a guess.
 */
export function deriveProvenance(t: Trajectory, cfg: ProvenanceConfig): DerivedProvenance {
  const { bundles, issues } = readTreatment(t, cfg.treatments);
  let treatment = null;
  if (bundles !== null) {
    const r = normalizeBundles(bundles);
    if (r.ok) treatment = r.value;
    else issues.push({ reason: r.error.kind, detail: `bundle id "${r.error.id}" declared with two definitions` });
  }
  let conditions = null;
  const snapshots = readConditions(t, cfg.conditions);
  if (snapshots !== null) {
    const r = normalizeSnapshots(snapshots);
    if (r.ok) conditions = r.value;
    else issues.push({ reason: r.error.kind, detail: `snapshot id "${r.error.id}" with two contents` });
  }
  return { treatment, conditions, issues };
}

