import { z } from 'zod';
import { canonicalJson } from '../../core/canonical-json.ts';
import { canonicalDigest } from '../../core/digest.ts';
import { EvidenceRefSchema, type EvidenceRef } from '../../core/evidence-ref.ts';
import type { CompositionConflict, Result } from '../result.ts';
import { idSet } from './id-set.ts';

/** One recorded operator steer. `at`/`planned` are null when the record does not say. */
export const SteerSchema = z
  .object({
    id: z.string().min(1),
    at: z.string().nullable(),
    planned: z.boolean().nullable(),
    evidence_ref: EvidenceRefSchema,
  })
  .strict();

export type Steer = z.infer<typeof SteerSchema>;

/**
 * A conditions snapshot: what the execution evidence says the run ran under. Every reading
 * is required and nullable: `null` = unavailable, never a guess. `operator_steers: []` means
 * the steer channel was captured and carried none; `null` means it was not captured.
 */
export const SnapshotSchema = z
  .object({
    id: z.string().min(1),
    population: z.array(z.string()),
    observed_at: z.string(),
    evidence_refs: z.array(EvidenceRefSchema),
    runtime_version: z.string().nullable(),
    lab_commit: z.string().nullable(),
    model_version: z.string().nullable(),
    provider_version: z.string().nullable(),
    seat: z.string().nullable(),
    host_load: z.number().nullable(),
    started_at: z.string().nullable(),
    operator_steers: z.array(SteerSchema).nullable(),
  })
  .strict();

export type Snapshot = z.infer<typeof SnapshotSchema>;
export type SnapshotContent = Omit<Snapshot, 'id'>;

/**
 * Steering as identity sees it. `not-captured` and `unknown-plan` never pool with `none` or
 * `planned`: an unknown steering state is not the same condition as a known one.
 */
export type SteeringState = 'not-captured' | 'none' | 'planned' | 'unplanned' | 'unknown-plan';

export function steeringState(steers: readonly Steer[] | null): SteeringState {
  if (steers === null) return 'not-captured';
  if (steers.length === 0) return 'none';
  if (steers.some((s) => s.planned === false)) return 'unplanned';
  if (steers.some((s) => s.planned === null)) return 'unknown-plan';
  return 'planned';
}

/** The fixed conditions: what finding identity rests on. Load, times, population and refs are covariates. */
export interface FixedConditions {
  runtime_version: string | null;
  lab_commit: string | null;
  model_version: string | null;
  provider_version: string | null;
  seat: string | null;
  steering: SteeringState;
}

export function fixedConditions(s: SnapshotContent): FixedConditions {
  return {
    runtime_version: s.runtime_version,
    lab_commit: s.lab_commit,
    model_version: s.model_version,
    provider_version: s.provider_version,
    seat: s.seat,
    steering: steeringState(s.operator_steers),
  };
}

function uniqueSorted<T>(items: readonly T[], key: (t: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const t of items) byKey.set(key(t), t);
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/**
 * The canonical JSON of a ref, which orders refs. A plain `{kind, uri}` ref (every span ref)
 * is written directly, in the same text `canonicalJson` gives it.
 */
const refKey = (r: EvidenceRef): string =>
  r.excerpt === undefined && Object.keys(r).length === 2 ? `{"kind":${JSON.stringify(r.kind)},"uri":${JSON.stringify(r.uri)}}` : canonicalJson(r);

function normalizeContent(s: SnapshotContent): SnapshotContent {
  return {
    population: uniqueSorted(s.population, (p) => p),
    observed_at: s.observed_at,
    evidence_refs: uniqueSorted(s.evidence_refs, refKey),
    runtime_version: s.runtime_version,
    lab_commit: s.lab_commit,
    model_version: s.model_version,
    provider_version: s.provider_version,
    seat: s.seat,
    host_load: s.host_load,
    started_at: s.started_at,
    operator_steers: s.operator_steers === null ? null : uniqueSorted(s.operator_steers, (st) => canonicalJson(st)),
  };
}

/**
 * `c1_<sha256 hex>` of the whole normalized content. A snapshot id names one immutable record,
 * so every field is in it — including covariates, which is why two snapshots that differ only
 * in host load get two ids rather than one id with two contents.
 */
export function snapshotId(content: SnapshotContent): string {
  return `c1_${canonicalDigest(normalizeContent(content))}`;
}

/**
 * Snapshots this module built already normalized. Normalizing is idempotent, so a snapshot
 * in this set is its own normal form and is not normalized again on its way from telemetry
 * to a finding. Snapshots are plain records nobody mutates; a changed copy is a new object.
 */
const normalized = new WeakSet<Snapshot>();

/** A snapshot with its arrays normalized and its id computed from its content. */
export function makeSnapshot(content: SnapshotContent): Snapshot {
  const normal = normalizeContent(content);
  // `snapshotId` would normalize again; `normal` is already its own normal form.
  const snapshot: Snapshot = { id: `c1_${canonicalDigest(normal)}`, ...normal };
  normalized.add(snapshot);
  return snapshot;
}

function normalizeSnapshot(s: Snapshot): Snapshot {
  if (normalized.has(s)) return s;
  const { id, ...content } = s;
  const normal: Snapshot = { id, ...normalizeContent(content) };
  normalized.add(normal);
  return normal;
}

/**
 * Snapshots as a set, sorted by id. Identical records collapse; an id reused with different
 * content is refused with a `snapshot-id-conflict`, whatever the id's origin.
 */
export function normalizeSnapshots(snapshots: readonly Snapshot[]): Result<Snapshot[], CompositionConflict> {
  return idSet(snapshots, { kind: 'snapshot-id-conflict', normal: normalizeSnapshot, identity: (s) => s });
}
