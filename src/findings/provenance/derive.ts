import type { Trajectory } from '../../assemble/trajectory.ts';
import type { ProvenanceConfig } from './config.ts';
import type { ProvenanceIssue } from './issue.ts';
import type { Provenance } from './provenance.ts';
import { readConditionContents, readConditions } from './read-conditions.ts';
import { readTreatment } from './read-treatment.ts';
import { normalizeBundles, type Bundle } from './treatment.ts';
import { normalizeSnapshots } from './conditions.ts';
import { conditionsIdentity, treatmentIdentity } from '../identity.ts';
import { canonicalJson } from '../../core/canonical-json.ts';

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
  const { treatment, issues } = deriveTreatment(t, cfg);
  let conditions = null;
  const snapshots = readConditions(t, cfg.conditions);
  if (snapshots !== null) {
    const r = normalizeSnapshots(snapshots);
    if (r.ok) conditions = r.value;
    else issues.push({ reason: r.error.kind, detail: `snapshot id "${r.error.id}" with two contents` });
  }
  return { treatment, conditions, issues };
}

function deriveTreatment(t: Trajectory, cfg: ProvenanceConfig): { treatment: Bundle[] | null; issues: ProvenanceIssue[] } {
  const { bundles, issues } = readTreatment(t, cfg.treatments);
  let treatment = null;
  if (bundles !== null) {
    const r = normalizeBundles(bundles);
    if (r.ok) treatment = r.value;
    else issues.push({ reason: r.error.kind, detail: `bundle id "${r.error.id}" declared with two definitions` });
  }
  return { treatment, issues };
}

/**
 * The identity part of `deriveProvenance(t, cfg)` as one text, without making the snapshots:
 * their ids are digests of their contents, so a derived list never conflicts, and the fixed
 * conditions are read from the contents alone (`conditionsIdentity`).
 */
function identityKey(t: Trajectory, cfg: ProvenanceConfig): string {
  const treatment = canonicalJson(treatmentIdentity(deriveTreatment(t, cfg).treatment));
  return `${treatment}\u0000${canonicalJson(conditionsIdentity(readConditionContents(t, cfg.conditions)))}`;
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
  const prefix = (count: number): Trajectory => (count === n ? t : { ...t, steps: t.steps.slice(0, count) });
  // Comparing identities needs only the fixed readings; a prefix is derived in full (snapshots
  // normalized and digested) only when its provenance is the answer.
  const identities = new Map<number, string>();
  const derived = new Map<number, DerivedProvenance>();
  const identity = (count: number): string => {
    let key = identities.get(count);
    if (key === undefined) {
      key = identityKey(prefix(count), cfg);
      identities.set(count, key);
    }
    return key;
  };
  const provenance = (count: number): DerivedProvenance => {
    let d = derived.get(count);
    if (d === undefined) {
      // `whole`: the caller's derivation of the whole trajectory, so it is not derived twice.
      d = count === n && whole !== undefined ? whole : deriveProvenance(prefix(count), cfg);
      derived.set(count, d);
    }
    return d;
  };
  let changes: number[] | undefined;
  const changePoints = (): number[] => {
    if (changes !== undefined) return changes;
    const found: number[] = [];
    let lo = 0;
    while (identity(lo) !== identity(n)) {
      const here = identity(lo);
      let known = lo;
      let probe = lo + 1;
      for (let stride = 2; identity(probe) === here; stride *= 2) {
        known = probe;
        probe = Math.min(lo + stride, n);
      }
      // The first change after `lo` lies in (known, probe].
      while (probe - known > 1) {
        const mid = (known + probe) >>> 1;
        if (identity(mid) === here) known = mid;
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
    if (count === n || identity(count) === identity(n)) return provenance(n);
    // The stretch that holds `count` ends just before the first change point after it.
    const next = changePoints().find((c) => c > count);
    return provenance(next === undefined ? n : next - 1);
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
