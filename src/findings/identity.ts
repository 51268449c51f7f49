import { bundleIdentity, type Bundle } from './provenance/treatment.ts';
import { fixedConditions, type Snapshot, type SnapshotContent } from './provenance/conditions.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import { sha256Hex } from '../core/digest.ts';

/** The fields a finding's identity rests on. Everything else on a finding is evidence or covariate. */
export interface FindingIdentityFields {
  analyst_id: string;
  area: string;
  /** Only `trajectory_key` is identity; trace ids, service, agent and revision are not (see below). */
  subject: { trajectory_key: string };
  claim: string;
  /**
   * What makes two equal claims about one trajectory two different facts, e.g. the anchor span
   * of an L0 hit or the argument digest of a repetition group. Treated as a set.
   */
  id_basis?: readonly string[];
  treatment: readonly Bundle[] | null;
  conditions: readonly Snapshot[] | null;
}

/** Whitespace runs collapsed to one space, trimmed, Unicode NFC: wording layout is not identity. */
export function normalizeClaim(claim: string): string {
  return claim.normalize('NFC').replace(/\s+/g, ' ').trim();
}

function sortedUnique(items: readonly string[]): string[] {
  return [...new Set(items)].sort();
}

/** The treatment and conditions part of identity, computed once per provenance. */
export interface CompositionIdentity {
  treatment: unknown[] | null;
  conditions: unknown[] | null;
  /** Their canonical JSON, serialized once rather than for every finding. */
  treatmentJson: string;
  conditionsJson: string;
}

/**
 * `null` composition (unavailable) and `[]` (observed none) are kept apart. Treatment: each
 * bundle's id, definition digest and layers. Conditions: the set of fixed readings (versions,
 * seat, steering state) — snapshots that differ only in covariates (host load, times,
 * population, refs) collapse to one entry.
 */
export function compositionIdentity(treatment: readonly Bundle[] | null, conditions: readonly Snapshot[] | null): CompositionIdentity {
  const t = treatmentIdentity(treatment);
  const c = conditionsIdentity(conditions);
  return { treatment: t, conditions: c, treatmentJson: canonicalJson(t), conditionsJson: canonicalJson(c) };
}

/** The treatment part of identity: each bundle's id, definition digest and layers, as a set. */
export function treatmentIdentity(treatment: readonly Bundle[] | null): unknown[] | null {
  return treatment === null ? null : asSet(treatment.map((b) => canonicalJson(bundleIdentity(b))));
}

/**
 * The conditions part of identity, read from snapshot contents: a snapshot's id and the order
 * of its arrays do not enter it, so contents not yet made into snapshots (no normal form, no
 * digest) compare exactly as their snapshots would.
 */
export function conditionsIdentity(conditions: readonly SnapshotContent[] | null): unknown[] | null {
  return conditions === null ? null : asSet(conditions.map((x) => canonicalJson(fixedConditions(x))));
}

const asSet = (docs: string[]): unknown[] => sortedUnique(docs).map((d) => JSON.parse(d) as unknown);

type IdentityCore = Omit<FindingIdentityFields, 'treatment' | 'conditions'>;

/** The canonical identity document that `finding_id` digests. */
export function identityDocument(f: IdentityCore, composition: CompositionIdentity): unknown {
  return {
    v: 1,
    analyst_id: f.analyst_id,
    area: f.area,
    trajectory_key: f.subject.trajectory_key,
    claim: normalizeClaim(f.claim),
    id_basis: sortedUnique(f.id_basis ?? []),
    treatment: composition.treatment,
    conditions: composition.conditions,
  };
}

/**
 * `findingId` with the composition part already computed (many findings, one provenance).
 * Writes the canonical text of {@link identityDocument} directly, its keys in canonical
 * (sorted) order, splicing in the composition's text: the same bytes, without serializing
 * the composition again for every finding. A test pins it to `canonicalJson(identityDocument)`.
 */
export function findingIdWith(f: IdentityCore, composition: CompositionIdentity): string {
  const text =
    `{"analyst_id":${JSON.stringify(f.analyst_id)}` +
    `,"area":${JSON.stringify(f.area)}` +
    `,"claim":${JSON.stringify(normalizeClaim(f.claim))}` +
    `,"conditions":${composition.conditionsJson}` +
    `,"id_basis":${canonicalJson(sortedUnique(f.id_basis ?? []))}` +
    `,"trajectory_key":${JSON.stringify(f.subject.trajectory_key)}` +
    `,"treatment":${composition.treatmentJson}` +
    `,"v":1}`;
  return `f1_${sha256Hex(text)}`;
}

/**
 * `f1_<sha256 hex>` of the canonical identity document.
 *
 * Revision and trace ids are deliberately not identity: a later revision of a trajectory
 * (a span arriving after close, often a new trace in the same session) that makes the same
 * claim must give the same id, so consumers deduplicate by `finding_id`. What the claim
 * rests on (anchor span, argument digest) goes in `id_basis`; what later evidence adds (more
 * carriers, a higher count) stays out of the claim, so the id does not grow with it. A
 * different claim (another judge answer) is a new finding.
 *
 * @example findingId({ analyst_id: 'l0', area: 'error-output', subject: { trajectory_key: 'k' },
 *   claim: 'x', id_basis: ['span:ab/cd'], treatment: null, conditions: null }) // 'f1_…'
 */
export function findingId(fields: FindingIdentityFields): string {
  return findingIdWith(fields, compositionIdentity(fields.treatment, fields.conditions));
}
