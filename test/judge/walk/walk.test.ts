import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { findingJsonSchema } from '../../../src/findings/json-schema.ts';
import { FindingSchema, type Finding } from '../../../src/findings/schema.ts';
import { checksConfigSchema } from '../../../src/checks/config.ts';
import { runChecks } from '../../../src/checks/run-checks.ts';
import { JudgeConfigSchema } from '../../../src/judge/config.ts';
import { DecisionPoints } from '../../../src/judge/decision-points.ts';
import { L1_OUTCOME, L3_TOOL_OUTPUTS, L4_CONTEXT, L4_GAP_KIND, verifierQuestion } from '../../../src/judge/walk/layer-questions.ts';
import { buildLayerRequestBody } from '../../../src/judge/walk/layer-prompt.ts';
import { extractWindows } from '../../../src/windows/extract.ts';
import { WindowPolicySchema, windowPolicyDigest } from '../../../src/windows/policy.ts';
import { calibrate } from '../../../src/calibration/calibrate.ts';
import { readLedger } from '../../../src/judge/ledger/ledger.ts';
import { installBoundCertificates } from '../certificate-fixture.ts';
import { deployRun, harness, judgeAll, type Harness } from '../judge-harness.ts';
import { completion, type ScriptedServer } from '../scripted-chat-server.ts';
import { cleanRun, failedToolRun, gapRun, installLayerCertificate, layerFindings, requestOf, summaryOf, valuesOf, walkScript } from './walk-harness.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint (no LLM can run
// here); windows, HTTP client, ledger files, certificates and findings are the real thing.

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const YES = { letter: 'A', p: 0.97 } as const;
const CHECKS = checksConfigSchema.parse({});
const V1 = verifierQuestion(L1_OUTCOME).id;
const V3 = verifierQuestion(L3_TOOL_OUTPUTS).id;

async function walking(script = walkScript(), walk: Record<string, unknown> = {}, over: Record<string, unknown> = {}): Promise<Harness> {
  const h = await harness(script, {}, { walk: { enabled: true, ...walk }, ...over });
  servers.push(h.server);
  return h;
}

const layerRequests = (h: Harness) => h.server.requests.map((r) => requestOf(JSON.parse(r) as Record<string, unknown>)).filter((r) => r.role !== 'trace');
const recommendationOf = (f: Finding) => valuesOf(f).recommendation as { action: string; reason: string };

describe('the layered walk', () => {
  it('is off by default: no layer is asked and the trace questions find exactly what they did', async () => {
    const on = await walking();
    const off = await harness(walkScript());
    servers.push(off.server);
    expect(JudgeConfigSchema.parse({}).walk.enabled).toBe(false);
    const a = await judgeAll(off.dataDir, off.cfg, [cleanRun()]);
    const b = await judgeAll(on.dataDir, on.cfg, [cleanRun()]);
    expect(layerRequests(off)).toEqual([]);
    expect(a.findings.every((f) => f.analyst_id === 'trace-questions')).toBe(true);
    expect(b.findings.filter((f) => f.analyst_id === 'trace-questions').map((f) => f.finding_id)).toEqual(a.findings.map((f) => f.finding_id));
  });

  it('stops after L1 when L1 passes and nothing is left to answer: one layer call, L2–L4 skipped (not undecidable)', async () => {
    const h = await walking();
    const { findings, dp } = await judgeAll(h.dataDir, h.cfg, [cleanRun()]);
    expect(layerRequests(h)).toEqual([{ role: 'layer', questionIds: [L1_OUTCOME.id] }]);
    const s = summaryOf(findings, 'clean-run')!;
    expect(FindingSchema.parse(s)).toEqual(s);
    expect(s.early_exit).toBe('L1');
    expect(s.layers_engaged).toEqual(['L0', 'L1']);
    expect(s.layer_verdicts!.map((v) => [v.layer, v.verdict, v.reason])).toEqual([
      ['L0', 'not-fired', 'no-pattern-fired'],
      ['L1', 'pass', 'answer:no'],
      ['L2', 'skipped', 'l1-passed-all-answerable'],
      ['L3', 'skipped', 'l1-passed-all-answerable'],
      ['L4', 'skipped', 'l1-passed-all-answerable'],
    ]);
    expect(s.layer_verdicts![1]!.windows).toEqual([expect.objectContaining({ kind: 'turn', fate: 'judged', answer: 'no' })]);
    expect(s.emissions!.missing).toEqual([]);
    expect(dp.walkStats()).toMatchObject({ walks: 1, earlyExits: 1, calls: { L1: 1 } });
  });

  it('does not stop over a capture gap: the silenced checks are unanswerable criteria, so L2 and L3 are asked', async () => {
    const h = await walking();
    const { findings } = await judgeAll(h.dataDir, h.cfg, [gapRun()]);
    const asked = layerRequests(h).map((r) => r.questionIds[0]);
    expect(asked).toEqual(expect.arrayContaining([L1_OUTCOME.id, 'layer.l2-trajectory', L3_TOOL_OUTPUTS.id]));
    const s = summaryOf(findings, 'gap-run')!;
    expect(s.early_exit).toBeNull();
    expect(s.layers_engaged).toEqual(['L0', 'L1', 'L2', 'L3', 'L4']);
    expect(s.layer_verdicts!.some((v) => v.reason === 'l1-passed-all-answerable')).toBe(false);
    expect(valuesOf(s).stop).toEqual({ stop: false, reason: expect.stringContaining('silenced-check:') });
    expect(JSON.stringify(valuesOf(s).stop)).toContain('tool-name-not-captured');
  });

  it('L4 with no send to read, on a capture that may hide one, is undecidable, not "no sends"', async () => {
    const h = await walking();
    const t = cleanRun('hidden-send');
    const llm = t.steps.find((x) => x.kind === 'llm')!;
    t.steps = t.steps.map((x) => (x === llm ? { ...x, requestedToolCalls: [{ name: 'send_email', id: 'call_hidden' }] } : x));
    const { findings } = await judgeAll(h.dataDir, h.cfg, [t]);
    const s = summaryOf(findings, 'hidden-send')!;
    expect(s.layer_verdicts!.find((v) => v.layer === 'L4')).toMatchObject({ verdict: 'undecidable', reason: 'sends-may-be-hidden' });
  });

  it('descends when L1 fails: every layer is asked in order, the ones with nothing to read are not-applicable', async () => {
    const h = await walking(walkScript({ [L1_OUTCOME.id]: YES }));
    const { findings } = await judgeAll(h.dataDir, h.cfg, [cleanRun()]);
    const s = summaryOf(findings, 'clean-run')!;
    expect(s.early_exit).toBeNull();
    expect(s.layers_engaged).toEqual(['L0', 'L1', 'L2', 'L3', 'L4']);
    expect(s.layer_verdicts!.map((v) => [v.layer, v.verdict])).toEqual([
      ['L0', 'not-fired'],
      ['L1', 'fail'],
      ['L2', 'pass'],
      ['L3', 'pass'],
      ['L4', 'not-applicable'],
    ]);
    expect(valuesOf(s).stop).toEqual({ stop: false, reason: expect.stringMatching(/^l1-fail:answer:yes@/) });
  });

  it('descends on an L1 pass when an L0 candidate is open, and surfaces the L3 verdict that contradicts it for a human', async () => {
    // L1 passes, L3 says the failed output is fine: the error-output candidate is contradicted.
    const h = await walking();
    const { findings, alarms } = await judgeAll(h.dataDir, h.cfg, [failedToolRun()]);
    const s = summaryOf(findings, 'failed-tool-run')!;
    expect(s.early_exit).toBeNull();
    expect(s.layer_verdicts!.find((v) => v.layer === 'L0')!.verdict).toBe('fired');
    const conflicts = findings.filter((f) => f.area === 'walk.conflict');
    expect(conflicts.length).toBeGreaterThanOrEqual(1);
    const c = conflicts.find((f) => valuesOf(f).kind === 'l0-contradicted')!;
    expect(valuesOf(c)).toMatchObject({
      layers: ['L0', 'L3'],
      verdicts: ['fired', 'pass'],
      audience: 'human',
      recommendation: { action: 'escalate', route: null, reason: 'layer-conflict' },
    });
    expect(FindingSchema.parse(c)).toEqual(c);
    expect(alarms).toEqual([]);
  });

  it('surfaces L1 pass against L2 fail as a conflict finding and keeps both verdicts as they were', async () => {
    const h = await walking(walkScript({ 'layer.l2-trajectory': YES }), { stopEarly: false });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [cleanRun()]);
    const s = summaryOf(findings, 'clean-run')!;
    expect(s.layer_verdicts!.filter((v) => v.layer === 'L1' || v.layer === 'L2').map((v) => v.verdict)).toEqual(['pass', 'fail']);
    const [c] = findings.filter((f) => f.area === 'walk.conflict');
    expect(c!.claim).toBe('Layers L1 (pass) and L2 (fail) disagree; surfaced for a human, not reconciled');
    expect(valuesOf(c!)).toMatchObject({ kind: 'layers-disagree', audience: 'human' });
  });

  it('no layer alarms without its own certificate: L1 and its verifier certified → L1 alarms; L3 escalates uncalibrated; a trace-question certificate qualifies no layer', async () => {
    const h = await walking(walkScript({ [L1_OUTCOME.id]: YES, [V1]: YES, [L3_TOOL_OUTPUTS.id]: YES, [V3]: YES }));
    await installLayerCertificate(h.dataDir, h.cfg, 'L1', 'layer', ['turn', 'event']);
    await installLayerCertificate(h.dataDir, h.cfg, 'L1', 'verifier', ['turn', 'event']);
    await installBoundCertificates(h.dataDir, h.cfg, { servedModel: 'judge-model-2025-01' });
    await installLayerCertificate(h.dataDir, h.cfg, 'L3', 'verifier', ['event']);
    const { findings, alarms } = await judgeAll(h.dataDir, h.cfg, [cleanRun()]);
    const layers = layerFindings(findings, 'clean-run');
    const l1 = layers.find((f) => f.area === L1_OUTCOME.id)!;
    const l3 = layers.find((f) => f.area === L3_TOOL_OUTPUTS.id)!;
    expect(recommendationOf(l1)).toMatchObject({ action: 'act', reason: 'verified' });
    expect(valuesOf(l1).certificate_id).toBe(`${L1_OUTCOME.id}-turn`);
    expect(valuesOf(l1).verification).toMatchObject({ fate: 'judged', answer: 'yes', certificate_id: `${V1}-turn` });
    expect(recommendationOf(l3)).toMatchObject({ action: 'escalate', reason: 'uncalibrated' });
    expect(valuesOf(l3).verification).toBeNull();
    expect(alarms.filter((f) => f.analyst_id === 'layered-walk')).toEqual([l1]);
    // The L1 certificate is bound to its window kinds: the terminal turn here.
    expect(l1.layer).toBe('turn');
  });

  it('the verifier can only downgrade: uncertified or disagreeing it takes act to escalate; a non-acting answer is never sent to it', async () => {
    const disagree = await walking(walkScript({ [L1_OUTCOME.id]: YES, [V1]: { letter: 'B', p: 0.97 } }));
    await installLayerCertificate(disagree.dataDir, disagree.cfg, 'L1', 'layer', ['turn']);
    await installLayerCertificate(disagree.dataDir, disagree.cfg, 'L1', 'verifier', ['turn']);
    const a = await judgeAll(disagree.dataDir, disagree.cfg, [cleanRun()]);
    const l1 = layerFindings(a.findings, 'clean-run').find((f) => f.area === L1_OUTCOME.id)!;
    expect(valuesOf(l1).primary_recommendation).toMatchObject({ action: 'act', reason: 'calibrated' });
    expect(recommendationOf(l1)).toMatchObject({ action: 'escalate', reason: 'verifier-disagreed' });
    expect(a.alarms).toEqual([]);
    expect(a.dp.walkStats().downgrades).toBe(1);

    const uncertified = await walking(walkScript({ [L1_OUTCOME.id]: YES, [V1]: YES }));
    await installLayerCertificate(uncertified.dataDir, uncertified.cfg, 'L1', 'layer', ['turn']);
    const b = await judgeAll(uncertified.dataDir, uncertified.cfg, [cleanRun()]);
    expect(recommendationOf(layerFindings(b.findings, 'clean-run').find((f) => f.area === L1_OUTCOME.id)!)).toMatchObject({
      action: 'escalate',
      reason: 'verifier-uncalibrated',
    });

    // The verifier says yes where the judge said no: nothing to downgrade, so it is not asked.
    const raise = await walking(walkScript({ [V1]: YES }));
    await installLayerCertificate(raise.dataDir, raise.cfg, 'L1', 'verifier', ['turn']);
    const c = await judgeAll(raise.dataDir, raise.cfg, [cleanRun()]);
    expect(layerRequests(raise).some((r) => r.role === 'verifier')).toBe(false);
    expect(recommendationOf(layerFindings(c.findings, 'clean-run')[0]!)).toMatchObject({ action: 'record' });
  });

  it('names every missing emission with its reason: windows beyond the layer cap, and a layer deferred by the budget', async () => {
    const h = await walking(walkScript({ [L1_OUTCOME.id]: YES }), { maxWindowsPerLayer: 1 });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [failedToolRun()]);
    const s = summaryOf(findings, 'failed-tool-run')!;
    const l3 = s.layer_verdicts!.find((v) => v.layer === 'L3')!;
    expect(l3.windows!.filter((w) => w.fate === 'not-read')).toEqual([
      expect.objectContaining({ window_id: expect.stringMatching(/^w1_[0-9a-f]{24}$/), kind: 'event', reason: 'windows-per-layer' }),
    ]);
    expect(s.emissions!.missing).toEqual([{ key: expect.stringMatching(/^L3@/), reason: 'not-read:windows-per-layer (1)' }]);
    // What was read passed, one window was not read: L3 cannot pass.
    expect(l3).toMatchObject({ verdict: 'undecidable', reason: 'not-read:1' });

    const tight = await walking(walkScript(), {}, { budget: { callsPerMinute: 1 } });
    const t = await judgeAll(tight.dataDir, tight.cfg, [cleanRun()], () => 1_000);
    const ts = summaryOf(t.findings, 'clean-run')!;
    expect(ts.layer_verdicts!.find((v) => v.layer === 'L1')).toMatchObject({ verdict: 'undecidable', reason: 'deferred:calls-per-minute' });
    expect(ts.early_exit).toBeNull();
    expect(ts.emissions!.missing[0]).toEqual({ key: expect.stringMatching(/^L1@/), reason: 'deferred:calls-per-minute' });
    expect(t.dp.walkStats().deferred['calls-per-minute']).toBeGreaterThanOrEqual(1);
  });

  it('a layer answer that does not parse is a named missing emission: L1 undecidable (failure:bad-answer), and the walk descends', async () => {
    const base = walkScript();
    const h = await walking((body) =>
      requestOf(body).questionIds[0] === L1_OUTCOME.id ? { body: completion([{ letter: 'B', support: 'e99' }]) } : base(body),
    );
    const { findings } = await judgeAll(h.dataDir, h.cfg, [cleanRun()]);
    const s = summaryOf(findings, 'clean-run')!;
    expect(s.layer_verdicts!.find((v) => v.layer === 'L1')).toMatchObject({ verdict: 'undecidable', reason: 'failure:bad-answer' });
    expect(s.emissions!.missing).toEqual([{ key: expect.stringMatching(/^L1@/), reason: 'failure:bad-answer' }]);
    expect(s.emissions!.emitted.some((e) => e.startsWith('L1@'))).toBe(false);
    expect(s.early_exit).toBeNull();
    expect(recommendationOf(layerFindings(findings, 'clean-run').find((f) => f.area === L1_OUTCOME.id)!)).toMatchObject({
      action: 'escalate',
      reason: 'bad-answer',
    });
  });

  it('a walk cut by shutdown names what it did not get: the call in flight cancelled, the layers after it deferred (shutdown)', async () => {
    const base = walkScript();
    const h = await walking((body) => (requestOf(body).questionIds[0] === L1_OUTCOME.id ? { hang: true } : base(body)));
    const findings: Finding[] = [];
    const dp = await DecisionPoints.open(h.dataDir, h.cfg, { checks: CHECKS, onFindings: (f) => findings.push(...f), onError: () => undefined });
    const t = cleanRun();
    const part = dp.consider(t, runChecks(t, CHECKS), []);
    while (!h.server.requests.some((r) => requestOf(JSON.parse(r) as Record<string, unknown>).questionIds[0] === L1_OUTCOME.id))
      await new Promise((r) => setTimeout(r, 5));
    await dp.close();
    await part;
    const s = summaryOf(findings, 'clean-run')!;
    expect(s.layer_verdicts!.map((v) => [v.layer, v.verdict, v.reason])).toEqual([
      ['L0', 'not-fired', 'no-pattern-fired'],
      ['L1', 'undecidable', 'failure:cancelled'],
      ['L2', 'undecidable', 'deferred:shutdown'],
      ['L3', 'undecidable', 'deferred:shutdown'],
      ['L4', 'not-applicable', 'no-outbound-sends'],
    ]);
    expect(s.emissions!.missing.map((m) => m.reason)).toEqual(['failure:cancelled', 'deferred:shutdown', 'deferred:shutdown']);
    expect(dp.walkStats().deferred.shutdown).toBe(2);
  });

  it('tries the next window kind when one is over a cap, naming the refusal: the terminal turn over maxRequestBytes, its event window judged', async () => {
    const t = cleanRun();
    const policy = WindowPolicySchema.parse({});
    const bytesOf = (kind: 'turn' | 'event') => {
      const [w] = extractWindows(t, [{ kind, anchorIndex: 0, triggers: ['terminal'] }], policy, windowPolicyDigest(policy)).windows;
      return Buffer.byteLength(
        JSON.stringify(buildLayerRequestBody('layer', w!, [L1_OUTCOME], { model: 'judge', maxOutputTokens: 256, logprobs: true, topLogprobs: 5 })),
      );
    };
    expect(bytesOf('event')).toBeLessThan(bytesOf('turn'));
    const h = await walking(walkScript(), {}, { windowPolicy: { config: { maxRequestBytes: Math.max(512, bytesOf('event')) } } });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [t]);
    const l1 = summaryOf(findings, 'clean-run')!.layer_verdicts!.find((v) => v.layer === 'L1')!;
    expect(l1.windows!.map((w) => [w.kind, w.fate, w.reason ?? null])).toEqual([
      ['turn', 'refused', 'request-bytes'],
      ['event', 'judged', null],
    ]);
    expect(l1.verdict).toBe('pass');
  });

  it('reads L4 at outbound sends and records the gap kind: retrieval when the context was never fetched', async () => {
    const h = await walking(walkScript({ [L4_CONTEXT.id]: YES, [L4_GAP_KIND.id]: YES }), { stopEarly: false });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [deployRun()]);
    const l4 = summaryOf(findings, 'deploy-run')!.layer_verdicts!.find((v) => v.layer === 'L4')!;
    expect(l4).toMatchObject({ verdict: 'fail', gap_kind: 'retrieval' });
    expect(
      layerFindings(findings, 'deploy-run')
        .filter((f) => f.area === L4_CONTEXT.id)
        .map((f) => valuesOf(f).gap_answer),
    ).toEqual(['yes', 'yes']);
  });

  it('every walk finding validates against the published finding JSON Schema (`trajwatch schema finding`)', async () => {
    const h = await walking(walkScript({ 'layer.l2-trajectory': YES, [L4_CONTEXT.id]: YES, [L4_GAP_KIND.id]: { letter: 'B', p: 0.97 } }), { stopEarly: false });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [deployRun(), failedToolRun()]);
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(findingJsonSchema());
    const walkFs = findings.filter((f) => f.analyst_id === 'layered-walk');
    expect(new Set(walkFs.map((f) => f.area))).toEqual(
      new Set(['walk.summary', 'walk.conflict', L1_OUTCOME.id, 'layer.l2-trajectory', L3_TOOL_OUTPUTS.id, L4_CONTEXT.id]),
    );
    for (const f of walkFs) expect(validate(JSON.parse(JSON.stringify(f))), JSON.stringify(validate.errors)).toBe(true);
    expect(summaryOf(findings, 'deploy-run')!.layer_verdicts!.find((v) => v.layer === 'L4')!.gap_kind).toBe('attention');
  });

  it('replays a walk from the ledger: the same findings, zero new calls', async () => {
    const h = await walking(walkScript({ [L1_OUTCOME.id]: YES }));
    const first = await judgeAll(h.dataDir, h.cfg, [failedToolRun()]);
    const before = h.server.requests.length;
    const again = await judgeAll(h.dataDir, h.cfg, [failedToolRun()]);
    expect(h.server.requests.length).toBe(before);
    const ids = (fs: Finding[]) =>
      fs
        .filter((f) => f.analyst_id === 'layered-walk')
        .map((f) => f.finding_id)
        .sort();
    expect(ids(again.findings)).toEqual(ids(first.findings));
    expect(valuesOf(summaryOf(again.findings, 'failed-tool-run')!).cost).toEqual({
      calls: 0,
      attempts: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      unknown_usage_attempts: 0,
    });
    expect(layerFindings(again.findings, 'failed-tool-run').every((f) => f.replay?.new_physical_calls === 0)).toBe(true);
  });

  it('trajwatch calibrate scores a layer question from its answers in the ledger, bound to its own target', async () => {
    const h = await walking();
    await judgeAll(h.dataDir, h.cfg, [cleanRun()]);
    const records = await readLedger(join(h.dataDir, 'judge', 'ledger.jsonl'));
    const answered = records.flatMap((r) => (r.type === 'result' ? r.answers.filter((a) => a.questionId === L1_OUTCOME.id).map(() => r.key.invocationId) : []));
    expect(answered).toHaveLength(1);
    const gold = [{ questionId: L1_OUTCOME.id, windowId: answered[0]!, label: 'no' as const, source: 'test' }];
    const report = calibrate(gold, records, 0.6);
    expect(report.unknownQuestionRows).toBe(0);
    const own = report.questions.filter((q) => q.target.questionId === L1_OUTCOME.id);
    expect(own).toHaveLength(1);
    expect(own[0]!.target).toMatchObject({ questionVersion: L1_OUTCOME.version, windowKind: 'turn' });
    expect(own[0]!.n).toBe(1);
  });
});
