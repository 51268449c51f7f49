import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { findingJsonSchema } from '../../src/findings/json-schema.ts';
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
