import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { DEFAULT_PROVENANCE_CONFIG } from '../../src/findings/provenance/config.ts';
import { deriveProvenance, provenanceAsOf } from '../../src/findings/provenance/derive.ts';
import { NO_PROVENANCE } from '../../src/findings/provenance/provenance.ts';
import { createAnalyzer } from '../../src/analyze.ts';
import type { Finding } from '../../src/findings/schema.ts';
import type { Step } from '../../src/normalize/step.ts';
import { agent, failedTool, step, tool, trajectory } from '../checks/builders.ts';

const TRACE_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const TRACE_B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const ERR = 'Connection refused by upstream host db-primary:5432';

interface Spec {
  act: 'ok' | 'fail' | 'llm' | 'gate';
  toolName: string;
  args: string;
  model: string;
}

const specArb: fc.Arbitrary<Spec> = fc.record({
  act: fc.constantFrom('ok', 'fail', 'fail', 'llm', 'gate'),
  toolName: fc.constantFrom('query_db', 'send_email', 'search'),
  args: fc.constantFrom('{}', '{"q":1}', JSON.stringify({ body: `Status: ${ERR}` })),
  model: fc.constantFrom('model-a', 'model-b'),
});

/** Steps for specs under `parent`, one every two seconds from `fromS`. */
function stepsFor(specs: readonly Spec[], parent: Step, fromS: number): Step[] {
  return specs.map((s, i) => {
    const at = fromS + 2 * i;
    const ctx = { at, parentId: parent.id, traceId: parent.traceId };
    if (s.act === 'llm') return step('llm', { ...ctx, input: `Observation: ${ERR}`, result: 'Retrying.', attributes: { 'gen_ai.response.model': s.model } });
    if (s.act === 'gate') return tool('approve_send', { ...ctx, args: '{}', result: 'approved' });
    if (s.act === 'fail') return failedTool(s.toolName, ERR, { ...ctx, args: s.args });
    return tool(s.toolName, { ...ctx, args: s.args, result: 'ok' });
  });
}

const byClaimKey = (findings: readonly Finding[]) => new Map(findings.map((f) => [JSON.stringify([f.analyst_id, f.area, f.id_basis ?? []]), f.finding_id]));

const analyzeWithProvenance = createAnalyzer({ checks: defaultChecksConfig, provenance: DEFAULT_PROVENANCE_CONFIG });

/** Findings as the pipeline makes them: checks, then findings with derived provenance. */
function findings(t: Trajectory): Finding[] {
  return analyzeWithProvenance(t).findings;
}

/** Findings without provenance (no treatment, no conditions): identity from the claim alone. */
function bareFindings(t: Trajectory): Finding[] {
  return findingsFromChecks(t, runChecks(t, defaultChecksConfig), NO_PROVENANCE);
}

describe('finding identity does not grow with later evidence', () => {
  it('later steps on another model or declaring a treatment do not change the provenance part of earlier claims', () => {
    const run = agent('Done.', { at: 0, end: 50, attributes: { 'gen_ai.response.model': 'model-a' } });
    const bad = failedTool('query_db', ERR, { at: 1, parentId: run.id });
    const turn2 = agent('Done again.', { at: 100, end: 150, traceId: TRACE_B, attributes: { 'gen_ai.response.model': 'model-b' } });
    const llm2 = step('llm', {
      at: 101,
      parentId: turn2.id,
      traceId: TRACE_B,
      attributes: { 'gen_ai.response.model': 'model-c', 'trajwatch.treatment.id': 'arm-2', 'trajwatch.treatment.layers': 'Model' },
    });
    const t1 = trajectory([run, bad]);
    const t2: Trajectory = { ...trajectory([run, bad, turn2, llm2]), revision: 2, traceIds: [TRACE_A, TRACE_B] };
    expect(deriveProvenance(t2, DEFAULT_PROVENANCE_CONFIG)).not.toEqual(deriveProvenance(t1, DEFAULT_PROVENANCE_CONFIG));
    const ids = (t: Trajectory) => byClaimKey(findings(t));
    const before = ids(t1);
    const after = ids(t2);
    expect(before.size).toBeGreaterThan(0);
    for (const [key, id] of before) expect(after.get(key), key).toBe(id);
  });

  it('a trajectory and any extension of it by later steps give the same finding_id for every claim in both', () => {
    fc.assert(
      fc.property(
        fc.array(specArb, { minLength: 1, maxLength: 8 }),
        fc.array(specArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom('same-run', 'next-turn'),
        fc.constantFrom('Done.', `Could not finish: ${ERR}`),
        (first, later, mode, answer) => {
          const run = agent(answer, { at: 0, end: 200, traceId: TRACE_A });
          const before = [run, ...stepsFor(first, run, 1)];
          const turn2 = agent('Done.', { at: 300, end: 400, traceId: TRACE_B });
          const added = mode === 'same-run' ? stepsFor(later, run, 100) : [turn2, ...stepsFor(later, turn2, 301)];
          const t1 = trajectory(before);
          const t2: Trajectory = {
            ...trajectory([...before, ...added]),
            revision: 2,
            traceIds: mode === 'same-run' ? [TRACE_A] : [TRACE_A, TRACE_B],
          };
          for (const make of [findings, bareFindings]) {
            const ids1 = byClaimKey(make(t1));
            const ids2 = byClaimKey(make(t2));
            for (const [key, id] of ids1) if (ids2.has(key)) expect(ids2.get(key), key).toBe(id);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a fault-passthrough whose carriers grow in turn 2 keeps its id (the LangGraph report)', () => {
    const run = agent('Done.', { at: 0, end: 50 });
    const bad = failedTool('query_db', ERR, { at: 1, parentId: run.id });
    const mail = tool('send_email', { at: 3, args: JSON.stringify({ body: ERR }), parentId: run.id });
    const retry = tool('query_db', { at: 5, args: '{}', result: 'ok', parentId: run.id });
    const turn2 = agent('Done again.', { at: 100, end: 150, traceId: TRACE_B });
    const again = tool('send_email', { at: 101, args: JSON.stringify({ body: `Reminder: ${ERR}` }), parentId: turn2.id, traceId: TRACE_B });
    const t1 = trajectory([run, bad, mail, retry]);
    const t2: Trajectory = { ...trajectory([run, bad, mail, retry, turn2, again]), revision: 2, traceIds: [TRACE_A, TRACE_B] };
    const pick = (t: Trajectory) => findings(t).filter((f) => f.area === 'fault-passthrough');
    const [f1] = pick(t1);
    const [f2] = pick(t2);
    expect(f2!.code_eval_hits![0]!.detail).not.toBe(f1!.code_eval_hits![0]!.detail);
    expect(f2!.evidence_refs.length).toBeGreaterThan(f1!.evidence_refs.length);
    expect(f2!.finding_id).toBe(f1!.finding_id);
  });
});

describe('provenanceAsOf', () => {
  it('reads only the steps started by the moment, and derives each prefix once', () => {
    const early = agent('x', { at: 0, end: 50, attributes: { 'gen_ai.response.model': 'model-a' } });
    const late = step('llm', { at: 60, parentId: early.id, attributes: { 'gen_ai.response.model': 'model-b' } });
    const t = trajectory([early, late]);
    const asOf = provenanceAsOf(t, DEFAULT_PROVENANCE_CONFIG);
    const models = (p: { conditions: { model_version: string | null }[] | null }) => p.conditions?.map((c) => c.model_version);
    expect(models(asOf(10n * 1_000_000_000n))).toEqual(['model-a']);
    expect(models(asOf(70n * 1_000_000_000n))).toEqual(['model-a,model-b']);
    expect(asOf(20n * 1_000_000_000n)).toBe(asOf(30n * 1_000_000_000n));
  });
});
