import fc from 'fast-check';
import type { EvidenceRef } from '../../src/core/evidence-ref.ts';
import { makeSnapshot, type Snapshot, type SnapshotContent } from '../../src/findings/provenance/conditions.ts';
import { TREATMENT_LAYERS, type Bundle } from '../../src/findings/provenance/treatment.ts';
import { isoFromUnixNano } from '../../src/core/time.ts';

const hex = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n });

export const traceIdArb = hex(32);
export const isoArb = fc.bigInt({ min: 1_600_000_000_000_000_000n, max: 1_900_000_000_000_000_000n }).map(isoFromUnixNano);

export const refArb: fc.Arbitrary<EvidenceRef> = fc.record({
  kind: fc.constantFrom('span', 'event', 'artifact', 'finding', 'metric'),
  uri: fc.tuple(traceIdArb, hex(16)).map(([t, s]) => `span:${t}/${s}`),
});

export const bundleArb: fc.Arbitrary<Bundle> = fc.record({
  id: fc.string({ minLength: 1, maxLength: 8 }),
  definition_digest: hex(64).map((h) => `sha256:${h}`),
  definition_refs: fc.array(refArb, { maxLength: 3 }),
  layers: fc.uniqueArray(fc.constantFrom(...TREATMENT_LAYERS), { minLength: 1 }),
});

/** Bundles with distinct ids (the same id twice would be a conflict or a duplicate). */
export const bundlesArb = fc.uniqueArray(bundleArb, { selector: (b) => b.id, maxLength: 4 });

const nullableText = fc.option(fc.string({ minLength: 1, maxLength: 10 }), { nil: null });

export const steersArb = fc.option(
  fc.uniqueArray(
    fc.record({
      id: fc.string({ minLength: 1, maxLength: 6 }),
      at: fc.option(isoArb, { nil: null }),
      planned: fc.option(fc.boolean(), { nil: null }),
      evidence_ref: refArb,
    }),
    { selector: (s) => s.id, maxLength: 3 },
  ),
  { nil: null },
);

export const snapshotContentArb: fc.Arbitrary<SnapshotContent> = fc.record({
  population: fc.array(
    traceIdArb.map((t) => `trace:${t}`),
    { maxLength: 3 },
  ),
  observed_at: isoArb,
  evidence_refs: fc.array(refArb, { maxLength: 3 }),
  runtime_version: nullableText,
  lab_commit: nullableText,
  model_version: nullableText,
  provider_version: nullableText,
  seat: nullableText,
  host_load: fc.option(fc.double({ min: 0, max: 64, noNaN: true }), { nil: null }),
  started_at: fc.option(isoArb, { nil: null }),
  operator_steers: steersArb,
});

export const snapshotsArb: fc.Arbitrary<Snapshot[]> = fc.array(snapshotContentArb.map(makeSnapshot), { maxLength: 4 });

/** The same list in another order (a random permutation). */
export function permutationOf<T>(items: readonly T[]): fc.Arbitrary<T[]> {
  return fc.shuffledSubarray([...items], { minLength: items.length, maxLength: items.length });
}
