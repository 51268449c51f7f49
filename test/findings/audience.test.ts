import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { audienceView, AudienceError, INTERNAL_FIELDS, internalPaths, stripInternal } from '../../src/findings/audience.ts';
import { internalField } from '../../src/findings/internal-field.ts';
import { findingJsonSchema, manifestJsonSchema, recordJsonSchema } from '../../src/findings/json-schema.ts';
import { FindingSchema, type Finding } from '../../src/findings/schema.ts';
import { z } from 'zod';
import {
  allRecords,
  expectExternalView,
  expectInternalView,
  failedJudgedFinding,
  judgedFinding,
  l0Findings,
  MARKERS,
  replayedFinding,
  sampleManifest,
} from './audience-fixture.ts';

describe('the audience rule: one strip, read from the schema marks', () => {
  it('names the internal fields from the zod schema itself', () => {
    expect(INTERNAL_FIELDS.finding).toEqual(
      expect.arrayContaining([
        'id_basis',
        'replay.original_receipt',
        'observation.values.requested_model',
        'observation.values.served_model',
        'observation.values.receipt',
        'observation.values.certificate_id',
        'observation.values.window_policy_digest',
        'observation.values.ledger_key',
      ]),
    );
    // A mark anywhere in a schema is found: nested, optional, inside arrays and unions.
    const s = z.object({
      a: z.array(z.object({ b: internalField(z.string().optional(), 'test') })),
      c: z.union([z.object({ d: internalField(z.number(), 'test') }), z.string()]),
    });
    expect(internalPaths(s)).toEqual([
      ['a', '*', 'b'],
      ['c', 'd'],
    ]);
  });

  it('both directions on every record kind: external has none of the internal fields, internal keeps them all', () => {
    for (const record of allRecords()) {
      const original = structuredClone(record);
      expectExternalView(audienceView(record, 'external'));
      expectInternalView(audienceView(record, 'internal'), original);
      expect(record, 'the strip never mutates its input').toEqual(original);
    }
  });

  it('keeps claims, verdicts, evidence, severity, the method (the determinism claim) and the answer', () => {
    const f = judgedFinding();
    const { view, removed } = stripInternal(f);
    for (const k of ['finding_id', 'claim', 'severity', 'evidence_refs', 'method', 'subject', 'treatment', 'conditions', 'observed_at'] as const)
      expect(view[k]).toEqual(f[k]);
    const values = (view.observation as { values: Record<string, unknown> }).values;
    expect(values).toMatchObject({ answer: 'yes', question_id: 'tool.error-ignored', probabilities: { yes: 0.91, no: 0.09 } });
    expect(removed.sort()).toEqual(
      [
        'id_basis',
        ...['certificate_id', 'failure', 'ledger_key', 'receipt', 'requested_model', 'served_model', 'window_policy_digest'].map(
          (k) => `observation.values.${k}`,
        ),
      ].sort(),
    );
    const l0 = l0Findings()[0]!;
    expect(audienceView(l0, 'external')).toEqual(Object.fromEntries(Object.entries(l0).filter(([k]) => k !== 'id_basis')));
    const replay = audienceView(replayedFinding(), 'external');
    expect(replay.replay).toEqual({ new_physical_calls: 0 });
  });

  it('fails loudly: an undeclared key in judged values, an unknown record observation, a judged finding with nothing to remove', () => {
    const f = judgedFinding();
    const undeclared = structuredClone(f);
    (undeclared.observation as { values: Record<string, unknown> }).values.judge_endpoint = 'https://internal';
    expect(() => audienceView(undeclared, 'external')).toThrow(AudienceError);
    expect(() => audienceView(undeclared, 'external')).toThrow(/judge_endpoint/);
    // The finding schema accepts only declared names; one read from elsewhere is still refused.
    const unknown = { ...f, observation: { kind: 'record', name: 'other-analyst', values: { model: 'x' } } } as unknown as Finding;
    expect(FindingSchema.safeParse(unknown).success).toBe(false);
    expect(() => audienceView(unknown, 'external')).toThrow(/other-analyst.*no declared audience/);
    // A judged finding whose internal fields were already gone: the strip would remove nothing.
    const bare = stripInternal(f).view;
    expect(() => audienceView(bare, 'external')).toThrow(/removed nothing/);
    // The internal view never throws: it is the record.
    expect(audienceView(undeclared, 'internal')).toBe(undeclared);
  });

  it('the JSON Schema covers both views: the external schema has no internal property, and each view validates its records', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const text = (s: unknown) => JSON.stringify(s);
    expect(text(findingJsonSchema('internal'))).toContain('"audience":"internal"');
    expect(text(findingJsonSchema('external'))).not.toContain('"audience":"internal"');
    expect(text(findingJsonSchema('external'))).not.toContain('"id_basis"');
    expect(text(findingJsonSchema('external'))).not.toContain('original_receipt');
    const external = ajv.compile(findingJsonSchema('external'));
    const internal = ajv.compile(findingJsonSchema('internal'));
    for (const f of [judgedFinding(), replayedFinding(), failedJudgedFinding(), ...l0Findings()]) {
      expect(internal(f), text(internal.errors)).toBe(true);
      const view = audienceView(f, 'external');
      expect(external(view), text(external.errors)).toBe(true);
    }
    // An external schema refuses a record carrying an internal top-level field (it is strict).
    expect(external(l0Findings()[0]!)).toBe(false);
    const records = ajv.compile(recordJsonSchema('external'));
    expect(records(audienceView(sampleManifest(), 'external'))).toBe(true);
    expect(ajv.compile(manifestJsonSchema('external'))(audienceView(sampleManifest(), 'external'))).toBe(true);
    expect(MARKERS.requestedModel).toBeTruthy();
  });
});
