import type { CompositionConflict, Result } from './result.ts';
import { compositionIdentity, findingIdWith, type CompositionIdentity } from './identity.ts';
import type { Bundle } from './provenance/treatment.ts';
import type { Snapshot } from './provenance/conditions.ts';
import { normalizeProvenance, type Provenance } from './provenance/provenance.ts';
import { FINDING_SCHEMA_VERSION, type Finding } from './schema.ts';

/** Everything a finding says except its schema version, id and provenance. */
export type FindingDraft = Omit<Finding, 'schema_version' | 'finding_id' | 'treatment' | 'conditions'>;

const sortedUnique = (xs: readonly string[]): string[] => [...new Set(xs)].sort();

/** Provenance normalized and its identity part computed: reusable for every finding of a trajectory. */
export interface PreparedProvenance {
  treatment: Bundle[] | null;
  conditions: Snapshot[] | null;
  identity: CompositionIdentity;
}

/** Normalize provenance once; refuses (as a value) ids reused with different content. */
export function prepareProvenance(p: Provenance): Result<PreparedProvenance, CompositionConflict> {
  const normal = normalizeProvenance(p);
  if (!normal.ok) return normal;
  const { treatment, conditions } = normal.value;
  return { ok: true, value: { treatment, conditions, identity: compositionIdentity(treatment, conditions) } };
}

/**
 * The one way to build a finding: normalizes the provenance sets and the subject's trace ids,
 * computes `finding_id`, and writes fields in one fixed order so equal inputs serialize to
 * equal bytes. Refuses (as a value) provenance whose ids conflict.
 */
export function makeFinding(draft: FindingDraft, provenance: Provenance): Result<Finding, CompositionConflict> {
  const prepared = prepareProvenance(provenance);
  return prepared.ok ? { ok: true, value: makePreparedFinding(draft, prepared.value) } : prepared;
}

/** `makeFinding` with provenance already prepared. */
export function makePreparedFinding(draft: FindingDraft, prepared: PreparedProvenance): Finding {
  const { treatment, conditions } = prepared;
  const subject: Finding['subject'] = {
    trajectory_key: draft.subject.trajectory_key,
    trace_ids: sortedUnique(draft.subject.trace_ids),
    ...(draft.subject.service === undefined ? {} : { service: draft.subject.service }),
    ...(draft.subject.agent === undefined ? {} : { agent: draft.subject.agent }),
    revision: draft.subject.revision,
  };
  const idBasis = draft.id_basis === undefined ? undefined : sortedUnique(draft.id_basis);
  return {
    schema_version: FINDING_SCHEMA_VERSION,
    finding_id: findingIdWith(
      { analyst_id: draft.analyst_id, area: draft.area, subject, claim: draft.claim, ...(idBasis === undefined ? {} : { id_basis: idBasis }) },
      prepared.identity,
    ),
    analyst_id: draft.analyst_id,
    area: draft.area,
    subject,
    claim: draft.claim,
    ...(idBasis === undefined ? {} : { id_basis: idBasis }),
    severity: draft.severity,
    layer: draft.layer,
    method: { kind: draft.method.kind, name: draft.method.name, version: draft.method.version },
    ...(draft.verdict === undefined ? {} : { verdict: draft.verdict }),
    evidence_refs: draft.evidence_refs,
    ...(draft.code_eval_hits === undefined ? {} : { code_eval_hits: draft.code_eval_hits }),
    ...(draft.observation === undefined ? {} : { observation: draft.observation }),
    ...(draft.replay === undefined ? {} : { replay: draft.replay }),
    ...(draft.layer_verdicts === undefined ? {} : { layer_verdicts: draft.layer_verdicts }),
    ...(draft.layers_engaged === undefined ? {} : { layers_engaged: draft.layers_engaged }),
    ...(draft.early_exit === undefined ? {} : { early_exit: draft.early_exit }),
    ...(draft.emissions === undefined ? {} : { emissions: draft.emissions }),
    treatment,
    conditions,
    observed_at: draft.observed_at,
    covariates: draft.covariates,
  };
}
