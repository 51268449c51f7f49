/**
 * The matrix's judgement of one run (harness.ts `evaluate`), on made-up evidence: what counts
 * as the expected repetition and failure, and that every other finding is a false one.
 */
import { describe, expect, it } from 'vitest';
import type { Span } from '../../src/ingest/span.ts';
import type { StepRow } from '../clients/harness.ts';
import { captureOf, evaluate, type Evidence, type FindingRow, type FrameworkSpec, type TrajectoryFileRow } from './harness.ts';
import type { ManifestRow } from './unread-row.ts';

const SPEC: FrameworkSpec = {
  id: 'fake',
  title: 'Fake',
  venv: 'fake',
  script: 'fake',
  instrumentation: 'OpenInference',
  packages: [],
  session: { kind: 'session' },
};
const CALLS = [
  ['s1', 'get_weather', { city: 'Paris' }],
  ['s2', 'get_weather', { city: 'Paris' }],
  ['s3', 'lookup_order', { order_id: '42' }],
  ['s4', 'get_weather', { city: 'Rome' }],
] as const;

function toolSpan(id: string, name: string, args: unknown, n: number): Span {
  return {
    traceId: 'a'.repeat(32),
    spanId: id,
    name,
    kind: 1,
    startTimeUnixNano: BigInt(n),
    endTimeUnixNano: BigInt(n + 1),
    status: { code: 0 },
    attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': name, 'input.value': JSON.stringify(args) },
    events: [],
    links: [],
    resource: {},
    scope: { name: 'test' },
    encodedBytes: 0,
  };
}

function step(id: string, name: string, args: unknown): StepRow {
  return {
    id,
    kind: 'tool',
    name,
    convention: 'openinference',
    toolName: name,
    args: { raw: JSON.stringify(args), parsed: args, digest: JSON.stringify(args) },
  };
}

const repetition: FindingRow = {
  finding_id: 'f-rep',
  area: 'tool-repetition',
  claim: '`get_weather` called 2 times with identical arguments',
  subject: { trajectory_key: 'sess', revision: 1 },
  observation: { kind: 'tool-repetition', tool_name: 'get_weather', count: 2, attempts: [{ span_id: 's1' }, { span_id: 's2' }] },
};
const failure: FindingRow = {
  finding_id: 'f-err',
  area: 'error-output',
  claim: 'tool "lookup_order" failed',
  subject: { trajectory_key: 'sess', revision: 1 },
  code_eval_hits: [{ pattern: 'error-output', anchor: 's3', detail: 'failed' }],
};
const passthrough = (claim: string): FindingRow => ({
  finding_id: `f-pass-${claim.length}`,
  area: 'fault-passthrough',
  claim,
  subject: { trajectory_key: 'sess', revision: 1 },
  code_eval_hits: [{ pattern: 'fault-passthrough', anchor: 's3', detail: claim }],
});

function evidence(over: Partial<Evidence> = {}): Evidence {
  const trajectory: TrajectoryFileRow = {
    key: 'sess',
    revision: 1,
    complete: true,
    incompleteReasons: [],
    closedBy: 'quiet-after-root',
    steps: CALLS.map(([id, name, args]) => step(id, name, args)),
  };
  return {
    sessionId: 'sess',
    trajectories: [trajectory],
    findings: [repetition, failure],
    raw: captureOf(CALLS.map(([id, name, args], i) => toolSpan(id, name, args, i))),
    logBodies: [],
    ...over,
  };
}

describe('evaluating one framework run', () => {
  it('passes a run with one key, named tool steps, parsed args, the repetition and the failure', () => {
    const row = evaluate(SPEC, evidence());
    expect(row.problems).toEqual([]);
    expect(Object.values(row.cells).map((c) => c.status)).toEqual(['yes', 'yes', 'yes', 'yes', 'yes', 'yes']);
  });

  it('allows a fault-passthrough at the failed tool that says it had no later success', () => {
    const row = evaluate(SPEC, evidence({ findings: [repetition, failure, passthrough('tool "lookup_order" failed once with no later success')] }));
    expect(row.problems).toEqual([]);
  });

  it('counts a fault-passthrough claiming the error reappears in a later step as false', () => {
    const row = evaluate(
      SPEC,
      evidence({ findings: [repetition, failure, passthrough('error text of tool "lookup_order" reappears in agent "agent" input')] }),
    );
    expect(row.cells.falseFindings.status).toBe('no');
    expect(row.cells.falseFindings.detail).toContain('reappears in agent');
  });

  it('does not take a repetition over other attempts than the two Paris calls', () => {
    const wrong: FindingRow = {
      ...repetition,
      finding_id: 'f-rep2',
      observation: { ...repetition.observation!, attempts: [{ span_id: 's1' }, { span_id: 's4' }] },
    };
    const row = evaluate(SPEC, evidence({ findings: [wrong, failure] }));
    expect(row.cells.repetition.status).toBe('no');
    expect(row.cells.falseFindings.status).toBe('no');
  });

  it('fails the session when the turns land under two keys, naming them', () => {
    const [t] = evidence().trajectories;
    const row = evaluate(
      SPEC,
      evidence({
        trajectories: [
          { ...t!, key: 'b'.repeat(32), steps: t!.steps.slice(0, 3) },
          { ...t!, key: 'c'.repeat(32), steps: t!.steps.slice(3) },
        ],
      }),
    );
    expect(row.cells.session).toEqual({ status: 'no', detail: 'want one key "sess", got a trace id (3 steps), a trace id (1 steps)' });
  });

  it("keeps a trajectory of `other` steps only (OpenLIT's create_agent span, made before the conversation) apart from the turns, and names it", () => {
    const [t] = evidence().trajectories;
    const setup = { ...t!, key: 'd'.repeat(32), steps: [{ id: 's9', kind: 'other', name: 'create_agent default', convention: 'genai' }] };
    const row = evaluate(SPEC, evidence({ trajectories: [setup, t!] }));
    expect(row.cells.session).toEqual({ status: 'yes', detail: 'key = session id; apart, of other steps only: a trace id (1 steps)' });
    // a second trajectory that holds a turn still fails
    const split = evaluate(
      SPEC,
      evidence({ trajectories: [{ ...t!, key: 'b'.repeat(32), steps: t!.steps.slice(0, 3) }, setup, { ...t!, steps: t!.steps.slice(3) }] }),
    );
    expect(split.cells.session.status).toBe('no');
  });

  it('fails args that keep a wrapper around the call', () => {
    const [t] = evidence().trajectories;
    const wrapped = t!.steps.map((s) => ({ ...s, args: { raw: '', parsed: { kwargs: s.args!.parsed }, digest: '' } }));
    const row = evaluate(SPEC, evidence({ trajectories: [{ ...t!, steps: wrapped }] }));
    expect(row.cells.args.status).toBe('no');
  });

  it('without tool spans, asks that every scripted call is recorded as a capture gap', () => {
    const spec: FrameworkSpec = { ...SPEC, noToolSpans: 'tools make no spans' };
    const [t] = evidence().trajectories;
    const llmOnly = { ...t!, steps: [] };
    const gap = (toolNames: string[]) => [{ reason: 'tool-call-not-captured', spanIds: ['l1'], toolNames }];
    const bare = evaluate(spec, evidence({ findings: [], raw: captureOf([]), trajectories: [{ ...llmOnly, captureGaps: gap(['get_weather']) }] }));
    expect(bare.cells.repetition).toEqual({ status: 'no', detail: 'no tool spans, and no tool-call-not-captured gap names lookup_order' });
    const both = evaluate(
      spec,
      evidence({ findings: [], raw: captureOf([]), trajectories: [{ ...llmOnly, captureGaps: gap(['get_weather', 'lookup_order']) }] }),
    );
    expect(both.problems).toEqual([]);
    expect([both.cells.args.status, both.cells.repetition.status, both.cells.failure.status]).toEqual(['n/a', 'n/a', 'n/a']);
  });

  it('in an unread convention, asks that every tool span is an unread-convention gap and the manifest claims no tool absence', () => {
    const spec: FrameworkSpec = { ...SPEC, unreadConvention: 'its own attributes' };
    const [t] = evidence().trajectories;
    const other = { ...t!, steps: t!.steps.map((s) => ({ ...s, kind: 'other', toolName: undefined, args: undefined })) };
    const unavailable = (check: string) => ({ check, status: 'unavailable', reason: 'unread-convention' });
    const manifest = (checks: ManifestRow['checks']): ManifestRow[] => [{ subject: { trajectory_key: 'sess', revision: 1 }, checks }];
    const all = manifest(['tool-repetition', 'unguarded-send', 'out-of-order-gate'].map(unavailable));
    const gap = (spanIds: string[]) => [{ reason: 'unread-convention', spanIds }];

    const partial = evaluate(spec, evidence({ findings: [failure], trajectories: [{ ...other, captureGaps: gap(['s1', 's2', 's3']) }], manifests: all }));
    expect(partial.cells.toolNames).toEqual({ status: 'no', detail: 'tool spans not in an unread-convention gap: get_weather s4' });
    const claimed = manifest([unavailable('tool-repetition'), { check: 'unguarded-send', status: 'none-observed' }, unavailable('out-of-order-gate')]);
    const silent = evaluate(
      spec,
      evidence({ findings: [failure], trajectories: [{ ...other, captureGaps: gap(['s1', 's2', 's3', 's4']) }], manifests: claimed }),
    );
    expect(silent.cells.repetition.detail).toBe('manifest of sess: unguarded-send is none-observed, want unavailable (unread-convention)');
    const honest = evaluate(spec, evidence({ findings: [failure], trajectories: [{ ...other, captureGaps: gap(['s1', 's2', 's3', 's4']) }], manifests: all }));
    expect(honest.problems).toEqual([]);
    expect([honest.cells.toolNames.status, honest.cells.args.status, honest.cells.repetition.status, honest.cells.failure.status]).toEqual([
      'n/a',
      'n/a',
      'n/a',
      'yes',
    ]);
  });
});
