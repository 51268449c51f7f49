import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { captureGaps } from '../../../src/assemble/capture-gaps.ts';
import type { Trajectory } from '../../../src/assemble/trajectory.ts';
import { checksConfigSchema } from '../../../src/checks/config.ts';
import { runChecks } from '../../../src/checks/run-checks.ts';
import { toolRoles } from '../../../src/checks/tool-roles.ts';
import type { LayerVerdict } from '../../../src/findings/schema.ts';
import type { Recommendation } from '../../../src/judge/decision-policy.ts';
import { layerConflicts } from '../../../src/judge/walk/conflicts.ts';
import { layerSites, PATTERN_LAYER } from '../../../src/judge/walk/layer-sites.ts';
import { criteriaAfterL1, stopAfterL1 } from '../../../src/judge/walk/stopping-rules.ts';
import { verifiedRecommendation, type VerifierReading } from '../../../src/judge/walk/verifier.ts';
import type { ResultRecord } from '../../../src/judge/ledger/record.ts';
import { ANSWER_OPTIONS } from '../../../src/judge/questions.ts';
import { extractWindows } from '../../../src/windows/extract.ts';
import { WindowPolicySchema, windowPolicyDigest } from '../../../src/windows/policy.ts';
import { at, NO_CHECKS, toolArgs, traj } from '../../windows/builders.ts';
import { deployRun } from '../judge-harness.ts';
import { cleanRun, failedToolRun, gapRun } from './walk-harness.ts';

const CHECKS = checksConfigSchema.parse({});
const criteriaOf = (t = cleanRun()) => criteriaAfterL1(t, runChecks(t, CHECKS), toolRoles(t, CHECKS), CHECKS);
const pass = { verdict: 'pass', reason: 'answer:no' } as const;

describe('the stopping rule after L1', () => {
  it('stops when L1 passes and every criterion is answerable (nothing was raised)', () => {
    const criteria = criteriaOf();
    expect(criteria).toEqual([{ id: 'nothing-raised', answerable: true, reason: 'no-candidate-failure-or-send' }]);
    expect(stopAfterL1(pass, criteria)).toEqual({ stop: true, reason: 'l1-passed-all-answerable' });
  });

  it('descends when L1 fails, and when L1 is undecidable, even with nothing raised', () => {
    expect(stopAfterL1({ verdict: 'fail', reason: 'answer:yes@x' }, criteriaOf())).toEqual({ stop: false, reason: 'l1-fail:answer:yes@x' });
    expect(stopAfterL1({ verdict: 'undecidable', reason: 'deferred:calls-per-minute' }, criteriaOf())).toEqual({
      stop: false,
      reason: 'l1-undecidable:deferred:calls-per-minute',
    });
  });

  it('descends on an L1 pass while an L0 candidate or a failed tool is open, naming each and the layer it needs', () => {
    const t = failedToolRun();
    const criteria = criteriaOf(t);
    expect(criteria.filter((c) => !c.answerable).map((c) => [c.reason.split('@')[0], c.needs])).toEqual(
      expect.arrayContaining([
        ['l0-candidate:error-output', 'L3'],
        ['failed-tool', 'L3'],
      ]),
    );
    const stop = stopAfterL1(pass, criteria);
    expect(stop.stop).toBe(false);
    expect(stop.reason).toMatch(/^unanswerable:.*l0-candidate:error-output@0000000000000002.*failed-tool@/);
  });

  it('descends on an L1 pass when there is an outbound send (only L4 reads its context)', () => {
    const criteria = criteriaOf(deployRun());
    expect(criteria.filter((c) => c.needs === 'L4').length).toBeGreaterThanOrEqual(2);
    expect(stopAfterL1(pass, criteria).stop).toBe(false);
  });

  it('descends on an L1 pass over an incomplete capture: the outcome cannot stand for the path', () => {
    const t = { ...cleanRun(), complete: false, incompleteReasons: ['idle-timeout' as const] };
    const criteria = criteriaOf(t);
    expect(criteria).toContainEqual({ id: 'capture-complete', answerable: false, reason: 'incomplete-capture:idle-timeout', needs: 'L2' });
    expect(stopAfterL1(pass, criteria).stop).toBe(false);
  });

  it('never stops with stopEarly off (every layer asked)', () => {
    expect(stopAfterL1(pass, criteriaOf(), false)).toEqual({ stop: false, reason: 'stop-early-off' });
  });
});

/** One complete capture per capture gap kind the assembler produces today, nothing else wrong with it. */
const GAP_RUNS: Record<string, () => Trajectory> = {
  'tool-name-not-captured': () => gapRun(),
  'tool-call-not-captured': () => {
    const t = cleanRun('requested-run');
    return { ...t, steps: t.steps.map((s) => (s.id === '0000000000000002' ? { ...s, requestedToolCalls: [{ name: 'lookup_population', id: 'call_9' }] } : s)) };
  },
  'tool-args-not-captured': () => {
    const t = cleanRun('no-args-run');
    return { ...t, steps: t.steps.map((s) => (s.kind === 'tool' ? { ...s, args: undefined } : s)) };
  },
  'tool-result-not-captured': () => {
    const t = cleanRun('no-result-run');
    return { ...t, steps: t.steps.map((s) => (s.kind === 'tool' ? { ...s, result: undefined } : s)) };
  },
};

describe('the stopping rule over a capture gap', () => {
  it('descends on an L1 pass when a gap silenced checks: one criterion per silenced check, naming the layer that settles it', () => {
    const t = gapRun();
    const checks = runChecks(t, CHECKS);
    // The scenario of the issue: the gap leaves checks unavailable, nothing fired.
    expect(checks.l0).toEqual([]);
    expect(checks.silenced.length).toBeGreaterThanOrEqual(3);
    const criteria = criteriaOf(t);
    for (const s of checks.silenced) {
      expect(criteria).toContainEqual({
        id: `silenced:${s.pattern}`,
        answerable: false,
        reason: `silenced-check:${s.pattern}:${s.reason}`,
        needs: PATTERN_LAYER[s.pattern],
      });
    }
    // tool-repetition is unavailable too: a check that cannot claim absence is not answered.
    expect(criteria).toContainEqual({
      id: 'unavailable:tool-repetition',
      answerable: false,
      reason: 'unavailable-check:tool-repetition:tool-name-not-captured',
      needs: 'L3',
    });
    const stop = stopAfterL1(pass, criteria);
    expect(stop.stop).toBe(false);
    expect(stop.reason).toMatch(/^unanswerable:.*silenced-check:malformed-structure:tool-name-not-captured/);
  });

  it('a gap that silences a check never lets the walk stop; a gap that silences nothing and touches no send raises nothing of its own', () => {
    for (const [reason, build] of Object.entries(GAP_RUNS)) {
      const t = build();
      expect(
        captureGaps(t.steps).map((g) => g.reason),
        reason,
      ).toEqual([reason]);
      const criteria = criteriaOf(t);
      const silenced = runChecks(t, CHECKS).silenced;
      if (silenced.length > 0) expect(stopAfterL1(pass, criteria), reason).toMatchObject({ stop: false });
      // Not a send here: the gap raises no criterion beyond the checks it silenced.
      expect(
        criteria.filter((c) => c.id.startsWith('capture-gap:')),
        reason,
      ).toEqual([]);
    }
    // A missing result on a search hides nothing a claim rests on but error-output's: that one
    // check descends, nothing else is raised for the gap.
    const t = cleanRun('result-less-search');
    t.steps = t.steps.map((s) => (s.kind === 'tool' && s.toolName !== undefined && s.statusCode !== 2 ? { ...s, result: undefined } : s));
    const ids = criteriaOf(t).map((c) => c.id);
    expect(ids.filter((id) => id.startsWith('capture-gap:'))).toEqual([]);
  });

  it('a gap at a send — a requested send never captured, a send without arguments — needs L4, the layer that reads sends', () => {
    const requested = cleanRun('requested-send');
    requested.steps = requested.steps.map((s) => (s.id === '0000000000000004' ? { ...s, requestedToolCalls: [{ name: 'send_email', id: 'call_1' }] } : s));
    expect(criteriaOf(requested)).toContainEqual({
      id: 'capture-gap:tool-call-not-captured',
      answerable: false,
      reason: 'capture-gap:tool-call-not-captured@0000000000000004',
      needs: 'L4',
    });
    const t = deployRun('send-no-args');
    t.steps = t.steps.map((s) => (s.toolName === 'send_email' ? { ...s, args: undefined } : s));
    expect(criteriaOf(t)).toContainEqual({
      id: 'capture-gap:tool-args-not-captured',
      answerable: false,
      reason: 'capture-gap:tool-args-not-captured@0000000000000004',
      needs: 'L4',
    });
  });
});

const rec = (action: Recommendation['action'], reason = 'x'): Recommendation => ({ action, route: action === 'act' ? 'coordinator-alarm' : null, reason });

function verifierResult(
  option: (typeof ANSWER_OPTIONS)[number] | null,
  action: Recommendation['action'],
  failure: ResultRecord['failure'] = null,
): VerifierReading {
  const result = {
    failure,
    answers: [
      {
        questionId: 'verify.layer.l1-outcome',
        questionVersion: '1',
        option,
        probabilities: null,
        unseenBound: null,
        support: null,
        recommendation: rec(action, action === 'act' ? 'calibrated' : 'uncalibrated'),
        certificateId: null,
      },
    ],
  } as unknown as ResultRecord;
  return { kind: 'answered', result, replay: false };
}

describe("the verifier's downgrade-only rule", () => {
  it('keeps an act only when the verifier answered yes and may act under its own certificate', () => {
    expect(verifiedRecommendation(rec('act', 'calibrated'), verifierResult('yes', 'act'))).toEqual({
      action: 'act',
      route: 'coordinator-alarm',
      reason: 'verified',
    });
  });

  it('takes an act down to escalate when the verifier disagrees, is uncertified, failed, or was not judged', () => {
    expect(verifiedRecommendation(rec('act'), verifierResult('no', 'record'))).toEqual(rec('escalate', 'verifier-disagreed'));
    expect(verifiedRecommendation(rec('act'), verifierResult('yes', 'escalate'))).toEqual(rec('escalate', 'verifier-uncalibrated'));
    expect(verifiedRecommendation(rec('act'), verifierResult(null, 'escalate', { kind: 'timeout', message: 't' }))).toEqual(
      rec('escalate', 'verifier-failed:timeout'),
    );
    expect(verifiedRecommendation(rec('act'), { kind: 'not-judged', fate: 'deferred', reason: 'tokens-per-day' })).toEqual(
      rec('escalate', 'verifier-deferred:tokens-per-day'),
    );
    expect(verifiedRecommendation(rec('act'), undefined)).toEqual(rec('escalate', 'verifier-not-asked'));
  });

  it('never raises anything: whatever the verifier says, a primary that does not act comes back unchanged, and act comes only from act', () => {
    const action = fc.constantFrom<Recommendation['action']>('act', 'escalate', 'record');
    const option = fc.constantFrom(...ANSWER_OPTIONS, null);
    fc.assert(
      fc.property(action, fc.string(), option, action, fc.boolean(), (primaryAction, reason, vOption, vAction, judged) => {
        const primary = rec(primaryAction, reason);
        const reading: VerifierReading = judged ? verifierResult(vOption, vAction) : { kind: 'not-judged', fate: 'refused', reason: 'request-bytes' };
        const out = verifiedRecommendation(primary, reading);
        if (primaryAction !== 'act') expect(out).toBe(primary);
        if (out.action === 'act') expect(primaryAction).toBe('act');
        expect(out.action === 'record').toBe(primaryAction === 'record');
      }),
    );
  });
});

describe('conflicts between layers', () => {
  const v = (layer: LayerVerdict['layer'], verdict: LayerVerdict['verdict']): LayerVerdict => ({ layer, verdict, reason: 'r' });

  it('L1 pass with L2 fail is a conflict; so is L1 fail with L2 pass, and L1 pass with L3 or L4 fail', () => {
    expect(layerConflicts(NO_CHECKS, [v('L1', 'pass'), v('L2', 'fail')], []).map((c) => c.layers)).toEqual([['L1', 'L2']]);
    expect(layerConflicts(NO_CHECKS, [v('L1', 'fail'), v('L2', 'pass')], []).map((c) => c.verdicts)).toEqual([['fail', 'pass']]);
    expect(layerConflicts(NO_CHECKS, [v('L1', 'pass'), v('L2', 'pass'), v('L3', 'fail'), v('L4', 'fail')], []).map((c) => c.layers)).toEqual([
      ['L1', 'L3'],
      ['L1', 'L4'],
    ]);
  });

  it('a failed outcome over sound tool outputs is not a conflict, nor are skipped or undecidable layers', () => {
    expect(layerConflicts(NO_CHECKS, [v('L1', 'fail'), v('L3', 'pass'), v('L4', 'pass')], [])).toEqual([]);
    expect(layerConflicts(NO_CHECKS, [v('L1', 'pass'), v('L2', 'skipped'), v('L3', 'undecidable')], [])).toEqual([]);
  });

  it('an L0 candidate is contradicted when a window of its layer covering the anchor answered no — and only then', () => {
    const t = failedToolRun();
    const checks = runChecks(t, CHECKS);
    const hit = checks.l0.find((h) => h.pattern === 'error-output')!;
    const policy = WindowPolicySchema.parse({});
    const at = (i: number) => extractWindows(t, [{ kind: 'event', anchorIndex: i, triggers: ['l0-hit'] }], policy, windowPolicyDigest(policy)).windows[0]!;
    const covering = at(1);
    const [c] = layerConflicts(checks, [], [{ layer: 'L3', window: covering, option: 'no' }]);
    expect(c).toMatchObject({ kind: 'l0-contradicted', layers: ['L0', 'L3'], verdicts: ['fired', 'pass'], anchor: `${t.steps[1]!.traceId}/${hit.anchor}` });
    expect(layerConflicts(checks, [], [{ layer: 'L3', window: covering, option: 'yes' }])).toEqual([]);
    expect(layerConflicts(checks, [], [{ layer: 'L2', window: covering, option: 'no' }])).toEqual([]);
  });
});

describe('the sites each layer reads', () => {
  it('L3 reads a fired L3 candidate wherever it is anchored, first, then failed tools, then the rest from the end, within the cap', () => {
    const root = at(1, { kind: 'agent', name: 'invoke_agent', agentName: 'a', input: 'go', endTimeUnixNano: at(100).startTimeUnixNano });
    const t = traj([
      root,
      at(2, { parentId: root.id, toolName: 'read_a', args: toolArgs('{}'), result: 'a' }),
      at(3, { parentId: root.id, kind: 'llm', name: 'chat', statusCode: 2, error: { source: 'status', message: 'Error: model overloaded' } }),
      at(4, { parentId: root.id, toolName: 'read_b', args: toolArgs('{}'), result: 'b' }),
      at(5, { parentId: root.id, toolName: 'read_c', args: toolArgs('{}'), result: 'c' }),
    ]);
    const checks = runChecks(t, CHECKS);
    expect(checks.l0.map((h) => [h.pattern, h.anchor])).toContainEqual(['error-output', '0000000000000003']);
    const plan = layerSites('L3', t, checks, toolRoles(t, CHECKS), 2);
    expect(plan.sites.map((s) => [s.anchorIndex, s.trigger])).toEqual([
      [2, 'l0-hit'],
      [4, 'sampled'],
    ]);
    expect(plan.notRead.map((s) => s.anchorIndex)).toEqual([3, 1]);
    expect(layerSites('L4', t, checks, toolRoles(t, CHECKS), 2)).toEqual({ sites: [], notRead: [], none: 'no-outbound-sends' });
  });
});
