import { z } from 'zod';
import { canonicalJson } from '../../core/canonical-json.ts';
import { canonicalDigest } from '../../core/digest.ts';
import { EvidenceRefSchema, type EvidenceRef } from '../../core/evidence-ref.ts';
import type { CompositionConflict, Result } from '../result.ts';
import { idSet } from './id-set.ts';

/** What a treatment deliberately changed. Separate from a finding's `layer` (how far a claim holds). */
export const TREATMENT_LAYERS = ['Task', 'Model', 'Budget', 'Team', 'Roles', 'Tools', 'Memory', 'Process', 'Oversight'] as const;
export type TreatmentLayer = (typeof TREATMENT_LAYERS)[number];

/**
 * A named treatment bundle: a deliberately assigned composition, identified by `id` and the
 * digest of its definition. `definition_refs` say where the definition lives.
 */
export const BundleSchema = z
  .object({
    id: z.string().min(1),
    definition_digest: z.string().min(1),
    definition_refs: z.array(EvidenceRefSchema),
    layers: z.array(z.enum(TREATMENT_LAYERS)).min(1),
  })
  .strict();

export type Bundle = z.infer<typeof BundleSchema>;

/** `sha256:<hex>` of a definition's canonical JSON: the same definition always digests alike. */
export function definitionDigest(definition: unknown): string {
  return `sha256:${canonicalDigest(definition)}`;
}

const layerRank = (l: TreatmentLayer): number => TREATMENT_LAYERS.indexOf(l);

function sortedRefs(refs: readonly EvidenceRef[]): EvidenceRef[] {
  const byKey = new Map<string, EvidenceRef>();
  for (const r of refs) byKey.set(canonicalJson(r), r);
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/** The part of a bundle that finding identity rests on; refs are where to read it, not what it is. */
export function bundleIdentity(b: Bundle): { id: string; definition_digest: string; layers: TreatmentLayer[] } {
  return {
    id: b.id,
    definition_digest: b.definition_digest,
    layers: [...new Set(b.layers)].sort((x, y) => layerRank(x) - layerRank(y)),
  };
}

/**
 * Bundles as a set: layers deduplicated in `TREATMENT_LAYERS` order, refs deduplicated and
 * sorted, bundles sorted by id. The same id with the same definition and layers is one bundle
 * (refs are united); the same id with a different definition or layers is refused.
 */
export function normalizeBundles(bundles: readonly Bundle[]): Result<Bundle[], CompositionConflict> {
  const set = idSet(bundles, {
    kind: 'bundle-id-conflict',
    normal: (b): Bundle => ({ ...bundleIdentity(b), definition_refs: sortedRefs(b.definition_refs) }),
    identity: bundleIdentity,
    merge: (kept, later) => {
      kept.definition_refs = sortedRefs([...kept.definition_refs, ...later.definition_refs]);
    },
  });
  if (!set.ok) return set;
  return {
    ok: true,
    value: set.value.map((b) => ({ id: b.id, definition_digest: b.definition_digest, definition_refs: b.definition_refs, layers: b.layers })),
  };
}
