import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { makeSnapshot, steeringState } from '../../src/findings/provenance/conditions.ts';
import { canonicalJson } from '../../src/core/canonical-json.ts';
import { DEFAULT_PROVENANCE_CONFIG, parseProvenanceConfig, type ProvenanceConfig } from '../../src/findings/provenance/config.ts';
import { deriveProvenance } from '../../src/findings/provenance/derive.ts';
import { definitionDigest } from '../../src/findings/provenance/treatment.ts';
import { refArb, snapshotContentArb } from './arbitraries.ts';
import { RESOURCE, sampleTrajectory, step, trajectory, TRACE_A, TRACE_B } from './trajectory-fixture.ts';

const armB = { id: 'arm-b', match: { 'experiment.arm': 'B' }, layers: ['Tools', 'Model'], definition: { tools: ['web_search'], model: 'x' } };

describe('treatment', () => {
  it('is null (unavailable) when no treatment source is configured, [] when configured and nothing applies', () => {
    const t = trajectory([step({ id: '0000000000000001' })]);
    const off = parseProvenanceConfig({ treatments: { fromAttributes: false } });
    expect(deriveProvenance(t, off).treatment).toBeNull();
    expect(deriveProvenance(t, DEFAULT_PROVENANCE_CONFIG).treatment).toEqual([]);
    expect(deriveProvenance(t, parseProvenanceConfig({ treatments: { bundles: [armB], fromAttributes: false } })).treatment).toEqual([]);
  });

  it('applies a configured bundle whose match attributes a step carries, with the definition digest', () => {
    const cfg = parseProvenanceConfig({ treatments: { bundles: [armB, { ...armB, id: 'arm-a', match: { 'experiment.arm': 'A' } }] } });
    const p = deriveProvenance(sampleTrajectory(), cfg);
    expect(p.treatment).toEqual([
      { id: 'arm-b', definition_digest: definitionDigest({ model: 'x', tools: ['web_search'] }), definition_refs: [], layers: ['Model', 'Tools'] },
    ]);
    expect(p.issues).toEqual([]);
  });

  it('compares match values by string form and needs every entry on one step', () => {
    const cfg = parseProvenanceConfig({ treatments: { bundles: [{ ...armB, match: { 'experiment.arm': 'B', 'experiment.n': 2 } }] } });
    const both = trajectory([step({ id: '0000000000000001', attributes: { 'experiment.arm': 'B' }, resource: { 'experiment.n': '2' } })]);
    const split = trajectory([
      step({ id: '0000000000000001', attributes: { 'experiment.arm': 'B' } }),
      step({ id: '0000000000000002', attributes: { 'experiment.n': 2 } }),
    ]);
    expect(deriveProvenance(both, cfg).treatment?.map((b) => b.id)).toEqual(['arm-b']);
    expect(deriveProvenance(split, cfg).treatment).toEqual([]);
  });

  it('reads bundles declared on the telemetry; several bundles may apply', () => {
    const t = trajectory([
      step({
        id: '0000000000000001',
        resource: { 'trajwatch.treatment.id': 'budget-low', 'trajwatch.treatment.layers': 'Budget', 'trajwatch.treatment.definition': '{"max_tokens": 1000}' },
      }),
      step({
        id: '0000000000000002',
        attributes: {
          'trajwatch.treatment.id': 'team-2',
          'trajwatch.treatment.layers': ['Team', 'Roles'],
          'trajwatch.treatment.definition_digest': 'sha256:feed',
          'trajwatch.treatment.definition_refs': 'https://lab/defs/team-2.yaml',
        },
      }),
    ]);
    const p = deriveProvenance(t, DEFAULT_PROVENANCE_CONFIG);
    expect(p.treatment).toEqual([
      { id: 'budget-low', definition_digest: definitionDigest({ max_tokens: 1000 }), definition_refs: [], layers: ['Budget'] },
      {
        id: 'team-2',
        definition_digest: 'sha256:feed',
        definition_refs: [{ kind: 'artifact', uri: 'https://lab/defs/team-2.yaml' }],
        layers: ['Team', 'Roles'],
      },
    ]);
  });

  it('refuses a declaration with unknown layers or a digest its definition does not match, recording why', () => {
    const t = trajectory([
      step({ id: '0000000000000001', attributes: { 'trajwatch.treatment.id': 'x', 'trajwatch.treatment.layers': 'Tools,Vibes' } }),
      step({
        id: '0000000000000002',
        attributes: {
          'trajwatch.treatment.id': 'y',
          'trajwatch.treatment.layers': 'Tools',
          'trajwatch.treatment.definition': '{}',
          'trajwatch.treatment.definition_digest': 'sha256:0',
        },
      }),
    ]);
    const p = deriveProvenance(t, DEFAULT_PROVENANCE_CONFIG);
    expect(p.treatment).toEqual([]);
    expect(p.issues.map((i) => i.reason)).toEqual(['treatment-declaration-invalid', 'treatment-declaration-invalid']);
    expect(p.issues[0]!.detail).toContain('Vibes');
  });

  it('a bundle id with two definitions refuses the whole treatment list (null), with the conflict recorded', () => {
    const cfg = parseProvenanceConfig({ treatments: { bundles: [armB] } });
    const t = trajectory([
      step({
        id: '0000000000000001',
        attributes: {
          'experiment.arm': 'B',
          'trajwatch.treatment.id': 'arm-b',
          'trajwatch.treatment.layers': 'Tools',
          'trajwatch.treatment.definition': '{"other":1}',
        },
      }),
    ]);
    const p = deriveProvenance(t, cfg);
    expect(p.treatment).toBeNull();
    expect(p.issues).toEqual([expect.objectContaining({ reason: 'bundle-id-conflict' })]);
  });
});

describe('conditions', () => {
  it('reads versions, seat, model, provider and root start from execution evidence', () => {
    const cfg = parseProvenanceConfig({ conditions: { steers: { captured: true } } });
    const p = deriveProvenance(sampleTrajectory(), cfg);
    expect(p.conditions).toHaveLength(1);
    const s = p.conditions![0]!;
    expect(s).toMatchObject({
      runtime_version: '2.3.1',
      lab_commit: null,
      model_version: 'gpt-4o-2024-08-06',
      provider_version: 'openai',
      seat: 'seat-7',
      host_load: null,
      started_at: '2023-11-14T22:13:20.001000000Z',
      population: [`trace:${TRACE_A}`],
    });
    expect(s.operator_steers).toEqual([
      {
        id: `steer:${TRACE_A}/0000000000000002/0`,
        at: null,
        planned: null,
        evidence_ref: { kind: 'event', uri: `event:${TRACE_A}/0000000000000002/0`, excerpt: 'operator.steer' },
      },
    ]);
    expect(s.evidence_refs).toContainEqual({ kind: 'span', uri: `span:${TRACE_A}/0000000000000002` });
    expect(s.id).toMatch(/^c1_[0-9a-f]{64}$/);
  });

  it('orders and dedupes evidence refs by their canonical JSON, with or without an excerpt', () => {
    const withExcerpt = fc.record({ kind: fc.constant('span' as const), uri: fc.constantFrom('span:a/1', 'span:a/2'), excerpt: fc.string({ maxLength: 3 }) });
    fc.assert(
      fc.property(snapshotContentArb, fc.array(fc.oneof(refArb, withExcerpt), { maxLength: 6 }), (content, refs) => {
        const all = [...content.evidence_refs, ...refs, ...refs];
        const expected = [...new Set(all.map((r) => canonicalJson(r)))].sort();
        expect(makeSnapshot({ ...content, evidence_refs: all }).evidence_refs.map((r) => canonicalJson(r))).toEqual(expected);
      }),
    );
  });

  it('steers are null when the channel is not captured and [] when captured with none', () => {
    const t = trajectory([step({ id: '0000000000000001', resource: RESOURCE })]);
    expect(deriveProvenance(t, DEFAULT_PROVENANCE_CONFIG).conditions![0]!.operator_steers).toBeNull();
    const captured = parseProvenanceConfig({ conditions: { steers: { captured: true } } });
    expect(deriveProvenance(t, captured).conditions![0]!.operator_steers).toEqual([]);
    expect(steeringState(null)).toBe('not-captured');
    expect(steeringState([])).toBe('none');
  });

  it('leaves every unreadable reading null — never guessed — and started_at null without a root', () => {
    const t = trajectory([step({ id: '0000000000000002', parentId: '00000000000000ff' })], { complete: false, incompleteReasons: ['root-not-seen'] });
    const s = deriveProvenance(t, DEFAULT_PROVENANCE_CONFIG).conditions![0]!;
    expect([s.runtime_version, s.lab_commit, s.model_version, s.provider_version, s.seat, s.host_load, s.started_at]).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(s.evidence_refs).toEqual([]);
  });

  it('is null when conditions capture is disabled', () => {
    expect(deriveProvenance(sampleTrajectory(), parseProvenanceConfig({ conditions: { enabled: false } })).conditions).toBeNull();
  });

  it('one snapshot per emitting process, in a stable order whatever the step order', () => {
    const other = { 'service.name': 'tool-svc', 'service.version': '0.9', 'vcs.ref.head.revision': 'abc123', 'trajwatch.host_load': '1.5' };
    const steps = [
      step({ id: '0000000000000001', resource: RESOURCE }),
      step({ id: '0000000000000002', traceId: TRACE_B, resource: other }),
      step({ id: '0000000000000003', resource: { ...RESOURCE } }),
    ];
    const cfg: ProvenanceConfig = DEFAULT_PROVENANCE_CONFIG;
    const a = deriveProvenance(trajectory(steps), cfg).conditions!;
    const b = deriveProvenance(trajectory([...steps].reverse()), cfg).conditions!;
    expect(a).toHaveLength(2);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    const toolSvc = a.find((s) => s.runtime_version === '0.9')!;
    expect(toolSvc).toMatchObject({ lab_commit: 'abc123', host_load: 1.5, population: [`trace:${TRACE_B}`] });
  });
});

describe('provenance config', () => {
  it('rejects unknown keys, bad layers, empty matches and duplicate bundle ids, naming each', () => {
    let caught: unknown;
    try {
      parseProvenanceConfig({
        treatments: {
          bundles: [
            { ...armB, layers: ['Vibes'] },
            { ...armB, match: {} },
          ],
          extra: 1,
        },
        conditions: { seatAttribute: 'x' },
      });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const issues = (caught as ConfigError).issues.join('\n');
    expect(issues).toContain('treatments.bundles.0.layers.0');
    expect(issues).toContain('treatments.bundles.1.match');
    expect(issues).toContain('extra');
    expect(issues).toContain('seatAttribute');
  });

  it('has documented defaults', () => {
    expect(DEFAULT_PROVENANCE_CONFIG.treatments).toEqual({ bundles: [], fromAttributes: true, attributePrefix: 'trajwatch.treatment' });
    expect(DEFAULT_PROVENANCE_CONFIG.conditions.runtimeVersionAttributes).toEqual(['service.version']);
    expect(DEFAULT_PROVENANCE_CONFIG.conditions.steers).toEqual({ captured: false, eventNames: ['operator.steer'] });
  });
});
