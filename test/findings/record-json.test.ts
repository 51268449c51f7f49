import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { sha256Hex } from '../../src/core/digest.ts';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { compositionIdentity } from '../../src/findings/identity.ts';
import { buildManifest } from '../../src/findings/manifest.ts';
import { DEFAULT_PROVENANCE_CONFIG, parseProvenanceConfig } from '../../src/findings/provenance/config.ts';
import { deriveProvenance, provenanceAsOf } from '../../src/findings/provenance/derive.ts';
import type { Provenance } from '../../src/findings/provenance/provenance.ts';
import { recordJson, rememberRecordJson } from '../../src/findings/record-json.ts';
import { agent, step } from '../checks/builders.ts';
import { sampleTrajectory, trajectory } from './trajectory-fixture.ts';

describe('recordJson', () => {
  it("is a manifest's JSON.stringify, and its id digests the content under v 1, serialized once", () => {
    const t = sampleTrajectory();
    const checks = runChecks(t, checksConfigSchema.parse({}));
    const provenance = deriveProvenance(t, parseProvenanceConfig({}));
    const findings = findingsFromChecks(t, checks, provenance);
    expect(findings.length).toBeGreaterThan(0);
    const m = buildManifest({ trajectory: t, checks, findings, provenance, judge: 'disabled', windows: [] });
    expect(recordJson(m)).toBe(JSON.stringify(m));
    const { record_kind, schema_version, manifest_id, ...content } = m;
    expect(manifest_id).toBe(`m1_${sha256Hex(JSON.stringify({ v: 1, ...content }))}`);
    for (const f of findings) expect(recordJson(f)).toBe(JSON.stringify(f));
  });

  it('serializes a record it was not told about, once, and keeps what it was told', () => {
    const record = { a: 1, b: ['x'] };
    const first = recordJson(record);
    expect(first).toBe('{"a":1,"b":["x"]}');
    expect(recordJson(record)).toBe(first);
    expect(recordJson(rememberRecordJson({ a: 2 }, '{"a":2}'))).toBe('{"a":2}');
  });
});

describe('provenanceAsOf, identities compared from snapshot contents', () => {
  it('answers each moment with provenance whose identity is that of the prefix started by then', () => {
    const models = ['model-a', 'model-b', 'model-c'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(0, 1, 2), { minLength: 1, maxLength: 9 }), fc.boolean(), (picks, steers) => {
        const root = agent('x', { at: 0, end: 100 });
        const steps = [root, ...picks.map((m, i) => step('llm', { at: 1 + i, parentId: root.id, attributes: { 'gen_ai.response.model': models[m]! } }))];
        const t = trajectory(steps);
        const cfg = steers ? parseProvenanceConfig({ conditions: { steers: { captured: true } } }) : DEFAULT_PROVENANCE_CONFIG;
        const asOf = provenanceAsOf(t, cfg, deriveProvenance(t, cfg));
        const key = (p: Provenance): string => {
          const c = compositionIdentity(p.treatment, p.conditions);
          return `${c.treatmentJson} ${c.conditionsJson}`;
        };
        for (let count = 1; count <= t.steps.length; count++) {
          const at = t.steps[count - 1]!.startTimeUnixNano;
          const prefix = deriveProvenance({ ...t, steps: t.steps.filter((s) => s.startTimeUnixNano <= at) }, cfg);
          expect(key(asOf(at))).toBe(key(prefix));
        }
      }),
    );
  });
});
