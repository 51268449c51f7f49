import { LongText } from '../../ingest/long-text.ts';
import type { Trajectory } from '../../assemble/trajectory.ts';
import type { AttrValue, Attributes } from '../../ingest/span.ts';
import type { Step } from '../../normalize/step.ts';
import { EVIDENCE_KINDS, spanUri, type EvidenceRef } from '../../core/evidence-ref.ts';
import type { TreatmentRule, TreatmentsConfig } from './config.ts';
import type { ProvenanceIssue } from './issue.ts';
import { scalarText } from './read-attribute.ts';
import { definitionDigest, TREATMENT_LAYERS, type Bundle, type TreatmentLayer } from './treatment.ts';

function attrMatches(step: Step, name: string, expected: string | number | boolean): boolean {
  const v = step.attributes[name] ?? step.resource[name];
  return v !== undefined && scalarText(v) === String(expected);
}

function ruleApplies(rule: TreatmentRule, steps: readonly Step[]): boolean {
  const entries = Object.entries(rule.match);
  return steps.some((s) => entries.every(([name, expected]) => attrMatches(s, name, expected)));
}

function bundleFromRule(rule: TreatmentRule): Bundle {
  return {
    id: rule.id,
    definition_digest: definitionDigest(rule.definition),
    definition_refs: rule.definition_refs,
    layers: rule.layers,
  };
}

/** A list attribute: an array, a JSON array in a string, or comma-separated text. */
function listOf(v: AttrValue | undefined): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.map((x) => scalarText(x) ?? '').filter((x) => x !== '');
  const text = scalarText(v);
  if (text === undefined) return [];
  if (text.trimStart().startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed.map((x) => String(x).trim()).filter((x) => x !== '');
    } catch {
      // Not JSON after all: fall through to comma-separated text.
    }
  }
  return text
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

function refFromUri(uri: string): EvidenceRef {
  const scheme = uri.slice(0, uri.indexOf(':'));
  const kind = (EVIDENCE_KINDS as readonly string[]).includes(scheme) ? (scheme as EvidenceRef['kind']) : 'artifact';
  return { kind, uri };
}

function definitionValue(value: AttrValue): unknown {
  const v = value instanceof LongText ? value.toString() : value;
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

/**
 * A bundle declared on one attribute set (a span's or a resource's) under `prefix`:
 * `.id` (required), `.layers` (required), `.definition` and/or `.definition_digest`,
 * `.definition_refs`. Without a definition or digest, the digest is taken over the declared
 * `{id, layers}` — the declaration is then the whole known definition.
 */
function bundleFromAttributes(attrs: Attributes, prefix: string, where: string): Bundle | ProvenanceIssue {
  const id = scalarText(attrs[`${prefix}.id`]);
  const refuse = (detail: string): ProvenanceIssue => ({ reason: 'treatment-declaration-invalid', detail: `${where}: ${detail}` });
  if (id === undefined) return refuse(`${prefix}.id is not a non-empty scalar`);
  const layerNames = listOf(attrs[`${prefix}.layers`]);
  const unknown = layerNames.filter((l) => !(TREATMENT_LAYERS as readonly string[]).includes(l));
  if (unknown.length > 0) return refuse(`bundle "${id}" names unknown layers ${JSON.stringify(unknown)}`);
  if (layerNames.length === 0) return refuse(`bundle "${id}" declares no layers`);
  const layers = layerNames as TreatmentLayer[];
  const declaredDigest = scalarText(attrs[`${prefix}.definition_digest`]);
  const definition = attrs[`${prefix}.definition`];
  const computed = definition === undefined || definition === null ? undefined : definitionDigest(definitionValue(definition));
  if (declaredDigest !== undefined && computed !== undefined && declaredDigest !== computed) {
    return refuse(`bundle "${id}" declares digest ${declaredDigest} but its definition digests to ${computed}`);
  }
  return {
    id,
    definition_digest: computed ?? declaredDigest ?? definitionDigest({ id, layers: [...new Set(layers)].sort() }),
    definition_refs: listOf(attrs[`${prefix}.definition_refs`]).map(refFromUri),
    layers,
  };
}

/**
 * Every bundle that applies to the trajectory, unnormalized, plus refused declarations. `null`
 * when no treatment source is configured at all (unavailable, as opposed to "none applied").
 */
export function readTreatment(t: Trajectory, cfg: TreatmentsConfig): { bundles: Bundle[] | null; issues: ProvenanceIssue[] } {
  if (cfg.bundles.length === 0 && !cfg.fromAttributes) return { bundles: null, issues: [] };
  const bundles = cfg.bundles.filter((r) => ruleApplies(r, t.steps)).map(bundleFromRule);
  const issues: ProvenanceIssue[] = [];
  if (cfg.fromAttributes) {
    const idKey = `${cfg.attributePrefix}.id`;
    const seenResources = new Set<Attributes>();
    const declare = (attrs: Attributes, where: () => string): void => {
      const b = bundleFromAttributes(attrs, cfg.attributePrefix, where());
      if ('reason' in b) issues.push(b);
      else bundles.push(b);
    };
    for (const step of t.steps) {
      if (step.attributes[idKey] !== undefined) declare(step.attributes, () => spanUri(step.traceId, step.id));
      // A resource object is shared by the spans of one export: read it once.
      if (seenResources.has(step.resource)) continue;
      seenResources.add(step.resource);
      if (step.resource[idKey] !== undefined) declare(step.resource, () => `resource of ${spanUri(step.traceId, step.id)}`);
    }
  }
  return { bundles, issues };
}
