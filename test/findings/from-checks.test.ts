import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckResults, L0Hit } from '../../src/checks/check-result.ts';
import { L0_PATTERNS } from '../../src/checks/check-result.ts';
import { TrajwatchError } from '../../src/errors.ts';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { findingId } from '../../src/findings/identity.ts';
import { parseProvenanceConfig } from '../../src/findings/provenance/config.ts';
import { deriveProvenance } from '../../src/findings/provenance/derive.ts';
import { makeSnapshot } from '../../src/findings/provenance/conditions.ts';
import { NO_PROVENANCE } from '../../src/findings/provenance/provenance.ts';
import { FindingSchema } from '../../src/findings/schema.ts';
import { sampleTrajectory, TRACE_A } from './trajectory-fixture.ts';

const DIGEST = 'ab'.repeat(32);
const span = (n: number) => ({ traceId: TRACE_A, spanId: `000000000000000${n}` });

function sampleResults(): CheckResults {
  return {
    l0: [
      { pattern: 'error-output', anchor: '0000000000000004', detail: 'tool "web_search" failed (status): Timeout', evidence: [span(4)] },
      {
        pattern: 'fault-passthrough',
        anchor: '0000000000000001',
        detail: 'run ended as success after tool "web_search" failed',
        evidence: [span(1), span(4), span(4)],
      },
    ],
    repetition: {
      status: 'observed',
      complete: true,
      groups: [{ toolName: 'web_search', argsDigest: DIGEST, count: 2, attempts: [span(3), span(4)] }],
    },
    silenced: [],
  };
}

const cfg = parseProvenanceConfig({ treatments: { bundles: [{ id: 'arm-b', match: { 'experiment.arm': 'B' }, layers: ['Tools'], definition: { v: 1 } }] } });

describe('findingsFromChecks', () => {
  const t = sampleTrajectory();
  const findings = findingsFromChecks(t, sampleResults(), deriveProvenance(t, cfg));

  it('makes one finding per L0 hit and per repetition group, each parsing with FindingSchema', () => {
    expect(findings).toHaveLength(3);
    for (const f of findings) {
      expect(FindingSchema.parse(f)).toEqual(f);
      expect(findingId(f)).toBe(f.finding_id);
    }
  });

  it('states an L0 hit as a fired candidate with its code eval hit and span refs to every step it rests on', () => {
    const f = findings.find((x) => x.area === 'fault-passthrough')!;
    expect(f).toMatchObject({
      analyst_id: 'l0',
      verdict: 'fired',
      layer: 'event',
      severity: 'high',
      method: { kind: 'computed', name: 'l0.fault-passthrough', version: '2' },
      code_eval_hits: [{ pattern: 'fault-passthrough', anchor: '0000000000000001', detail: 'run ended as success after tool "web_search" failed' }],
      evidence_refs: [
        { kind: 'span', uri: `span:${TRACE_A}/0000000000000001` },
        { kind: 'span', uri: `span:${TRACE_A}/0000000000000004` },
      ],
      subject: { trajectory_key: 'session-1', trace_ids: [TRACE_A], service: 'agent-svc', agent: 'planner', revision: 1 },
    });
    expect(f.claim).toMatch(/^Candidate fault-passthrough/);
    // The anchor (root agent) ends at its own end time, taken from the span.
    expect(f.observed_at).toBe('2023-11-14T22:13:20.001500123Z');
  });

  it('states repetition as an observation with count, digest and attempts, never as waste', () => {
    const f = findings.find((x) => x.analyst_id === 'tool-repetition')!;
    expect(f.claim).toBe('`web_search` called more than once with identical arguments');
    expect(f.claim).not.toMatch(/wast|redundan|unnecessar/i);
    expect(f).toMatchObject({
      area: 'tool.repetition',
      verdict: 'observed',
      severity: 'info',
      observation: { kind: 'tool-repetition', tool_name: 'web_search', args_digest: DIGEST, count: 2, capture_complete: true },
      evidence_refs: [
        { kind: 'span', uri: `span:${TRACE_A}/0000000000000003` },
        { kind: 'span', uri: `span:${TRACE_A}/0000000000000004` },
      ],
      observed_at: '2023-11-14T22:13:20.004500123Z',
    });
  });

  it('keeps the count and whether the capture was complete out of the claim, so neither changes the id', () => {
    const r = sampleResults();
    if (r.repetition.status === 'observed') r.repetition.complete = false;
    const inc = findingsFromChecks({ ...t, complete: false, incompleteReasons: ['idle-timeout'] }, r, NO_PROVENANCE);
    const f = inc.find((x) => x.analyst_id === 'tool-repetition')!;
    expect(f.claim).toBe('`web_search` called more than once with identical arguments');
    expect(f.observation).toMatchObject({ count: 2, capture_complete: false });
    expect(f.covariates).toMatchObject({ capture_complete: false, incomplete_reasons: ['idle-timeout'] });
    const more = sampleResults();
    if (more.repetition.status === 'observed') more.repetition.groups[0]!.count = 3;
    const grown = findingsFromChecks(t, more, NO_PROVENANCE).find((x) => x.analyst_id === 'tool-repetition')!;
    expect(grown.finding_id).toBe(f.finding_id);
    expect(grown.observation).toMatchObject({ count: 3, capture_complete: true });
  });

  it('claims an L0 hit from its pattern and anchor alone; the detail rides in code_eval_hits', () => {
    const f = findings.find((x) => x.area === 'fault-passthrough')!;
    expect(f.claim).toBe('Candidate fault-passthrough (not a verdict): the failure of agent "planner" was carried on as if it had succeeded');
    const r = sampleResults();
    r.l0[1] = { ...r.l0[1]!, detail: `${r.l0[1]!.detail}, and a later tool "send_email" arguments` };
    const grown = findingsFromChecks(t, r, deriveProvenance(t, cfg)).find((x) => x.area === 'fault-passthrough')!;
    expect(grown.finding_id).toBe(f.finding_id);
    expect(grown.code_eval_hits![0]!.detail).toMatch(/send_email/);
  });

  it('carries the derived treatment and conditions on every finding', () => {
    for (const f of findings) {
      expect(f.treatment?.map((b) => b.id)).toEqual(['arm-b']);
      expect(f.conditions).toHaveLength(1);
    }
  });

  it('emits nothing for none-observed or unavailable repetition', () => {
    expect(findingsFromChecks(t, { l0: [], repetition: { status: 'none-observed' }, silenced: [] }, NO_PROVENANCE)).toEqual([]);
    expect(findingsFromChecks(t, { l0: [], repetition: { status: 'unavailable', reasons: ['root-not-seen'] }, silenced: [] }, NO_PROVENANCE)).toEqual([]);
  });

  it('throws on provenance whose snapshot ids conflict (deriveProvenance never produces it)', () => {
    const s = makeSnapshot(deriveProvenance(t, cfg).conditions![0]!);
    expect(() => findingsFromChecks(t, sampleResults(), { treatment: null, conditions: [s, { ...s, seat: 'forged' }] })).toThrow(TrajwatchError);
  });

  it('is deterministic: the same input in any hit order gives byte-identical findings', () => {
    const hitArb: fc.Arbitrary<L0Hit> = fc
      .record({ pattern: fc.constantFrom(...L0_PATTERNS), n: fc.integer({ min: 1, max: 4 }), detail: fc.string({ maxLength: 20 }) })
      .map(({ pattern, n, detail }) => ({ pattern, anchor: `000000000000000${n}`, detail, evidence: [span(n)] }));
    fc.assert(
      fc.property(fc.array(hitArb, { maxLength: 8 }), fc.boolean(), (hits, reverse) => {
        const results: CheckResults = { ...sampleResults(), l0: hits };
        const once = JSON.stringify(findingsFromChecks(t, results, deriveProvenance(t, cfg)));
        const copy = structuredClone(sampleTrajectory());
        const again = JSON.stringify(findingsFromChecks(copy, { ...results, l0: reverse ? [...hits].reverse() : hits }, deriveProvenance(copy, cfg)));
        expect(again).toBe(once);
      }),
    );
  });

  it('sorts findings by observed_at, then finding_id', () => {
    const keys = findings.map((f) => `${f.observed_at} ${f.finding_id}`);
    expect(keys).toEqual([...keys].sort());
  });
});
