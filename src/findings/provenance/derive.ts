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


/**
 * Provenance as of a moment: `deriveProvenance` over the steps that had started by
 * `untilUnixNano` — the treatment and conditions in effect when a claim was first observed.
 * Steps that start later (a later turn on another model, a span declaring another treatment)
 * cannot change them, so a claim's identity does not grow with the trajectory. Each distinct
 * prefix of the (start-ordered) steps is derived once.
 */
export function provenanceAsOf(t: Trajectory, cfg: ProvenanceConfig): (untilUnixNano: bigint) => DerivedProvenance {
  const byCount = new Map<number, DerivedProvenance>();
  return (untilUnixNano) => {
    const count = startedBy(t, untilUnixNano);
    let derived = byCount.get(count);
    if (derived === undefined) {
      derived = deriveProvenance(count === t.steps.length ? t : { ...t, steps: t.steps.slice(0, count) }, cfg);
      byCount.set(count, derived);
    }
    return derived;
  };
}

/** How many of the trajectory's steps (ordered by start time) started at or before `at`. */
function startedBy(t: Trajectory, at: bigint): number {
  let lo = 0;
  let hi = t.steps.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t.steps[mid]!.startTimeUnixNano <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
