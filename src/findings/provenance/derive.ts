import type { Trajectory } from '../../assemble/trajectory.ts';
import type { ProvenanceConfig } from './config.ts';
import type { ProvenanceIssue } from './issue.ts';
import type { Provenance } from './provenance.ts';
import { readConditions } from './read-conditions.ts';
import { readTreatment } from './read-treatment.ts';
import { normalizeBundles } from './treatment.ts';
import { normalizeSnapshots } from './conditions.ts';
import { compositionIdentity } from '../identity.ts';

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
 * cannot change them, so a claim's identity does not grow with the trajectory.
 *
 * What a prefix of the (start-ordered) steps yields only grows with the prefix — more
 * processes, more values in a reading, more bundles, a conflict that stays — so its identity
 * part (the fixed readings, the bundles' identities) is a step function of the prefix length
 * with few steps. Its change points are found by galloping from the start and bisecting (a few
 * short derivations each, not one per finding), and a moment is answered with the derivation
 * at the end of its constant stretch: the whole trajectory's for every moment after the last
 * change, so covariates are read as widely as the identity allows.
 */
export function provenanceAsOf(t: Trajectory, cfg: ProvenanceConfig, whole?: DerivedProvenance): (untilUnixNano: bigint) => DerivedProvenance {
  const n = t.steps.length;
  const derived = new Map<number, { provenance: DerivedProvenance; identity: string }>();
  const at = (count: number) => {
    let d = derived.get(count);
    if (d === undefined) {
      // `whole`: the caller's derivation of the whole trajectory, so it is not derived twice.
      const provenance = count === n && whole !== undefined ? whole : deriveProvenance(count === n ? t : { ...t, steps: t.steps.slice(0, count) }, cfg);
      const c = compositionIdentity(provenance.treatment, provenance.conditions);
      d = { provenance, identity: `${c.treatmentJson}\u0000${c.conditionsJson}` };
      derived.set(count, d);
    }
    return d;
  };
  let changes: number[] | undefined;
  const changePoints = (): number[] => {
    if (changes !== undefined) return changes;
    const found: number[] = [];
    let lo = 0;
    while (at(lo).identity !== at(n).identity) {
      const here = at(lo).identity;
      let known = lo;
      let probe = lo + 1;
      for (let stride = 2; at(probe).identity === here; stride *= 2) {
        known = probe;
        probe = Math.min(lo + stride, n);
      }
      // The first change after `lo` lies in (known, probe].
      while (probe - known > 1) {
        const mid = (known + probe) >>> 1;
        if (at(mid).identity === here) known = mid;
        else probe = mid;
      }
      found.push(probe);
      lo = probe;
    }
    changes = found;
    return changes;
  };
  return (untilUnixNano) => {
    const count = startedBy(t, untilUnixNano);
    // The identity only grows with the prefix: equal at `count` and at the end means equal
    // throughout, so the whole trajectory's derivation answers (one derivation, no search).
    if (count === n || at(count).identity === at(n).identity) return at(n).provenance;
    // The stretch that holds `count` ends just before the first change point after it.
    const next = changePoints().find((c) => c > count);
    return at(next === undefined ? n : next - 1).provenance;
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
