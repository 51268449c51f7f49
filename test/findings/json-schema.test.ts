import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { findingJsonSchema, manifestJsonSchema, recordJsonSchema } from '../../src/findings/json-schema.ts';
import { buildManifest } from '../../src/findings/manifest.ts';
import { parseProvenanceConfig } from '../../src/findings/provenance/config.ts';
import { deriveProvenance } from '../../src/findings/provenance/derive.ts';
import { sampleTrajectory, TRACE_A } from './trajectory-fixture.ts';

describe('finding JSON Schema', () => {
  const schema = findingJsonSchema();
  const ajv = new Ajv2020({ strict: false, allErrors: true });

  it('is a valid draft 2020-12 schema', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(ajv.validateSchema(schema)).toBe(true);
  });

  it('accepts produced findings and rejects a finding with an unknown field or a wall-clock time', () => {
    const t = sampleTrajectory();
    const cfg = parseProvenanceConfig({ conditions: { steers: { captured: true } } });
    const [f] = findingsFromChecks(
      t,
      {
        l0: [{ pattern: 'error-output', anchor: '0000000000000004', detail: 'failed', evidence: [{ traceId: TRACE_A, spanId: '0000000000000004' }] }],
        repetition: { status: 'none-observed' },
        silenced: [],
      },
      deriveProvenance(t, cfg),
    );
    const validate = ajv.compile(schema);
    const round = JSON.parse(JSON.stringify(f)) as Record<string, unknown>;
    expect(validate(round), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...round, extra: 1 })).toBe(false);
    expect(validate({ ...round, observed_at: new Date(0).toISOString() })).toBe(false);
  });
});

describe('analysis manifest and findings-record JSON Schemas', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });

  it('are valid draft 2020-12 schemas; a record is exactly one of a finding or a manifest', () => {
    for (const schema of [manifestJsonSchema(), recordJsonSchema()]) expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).toBe(true);
    const t = sampleTrajectory();
    const checks = runChecks(t, checksConfigSchema.parse({}));
    const provenance = deriveProvenance(t, parseProvenanceConfig({}));
    const findings = findingsFromChecks(t, checks, provenance);
    const manifest = JSON.parse(JSON.stringify(buildManifest({ trajectory: t, checks, findings, provenance, judge: 'disabled', windows: [] }))) as Record<
      string,
      unknown
    >;
    const record = ajv.compile(recordJsonSchema());
    const manifestOnly = ajv.compile(manifestJsonSchema());
    expect(manifestOnly(manifest), JSON.stringify(manifestOnly.errors)).toBe(true);
    expect(manifestOnly({ ...manifest, extra: 1 })).toBe(false);
    expect(record(manifest)).toBe(true);
    for (const f of findings) expect(record(JSON.parse(JSON.stringify(f))), JSON.stringify(record.errors)).toBe(true);
    // A finding with a record_kind is neither.
    expect(record({ ...JSON.parse(JSON.stringify(findings[0])), record_kind: 'analysis-manifest' })).toBe(false);
  });
});
