import { describe, expect, it } from 'vitest';
import { runChecks } from '../../src/checks/run-checks.ts';
import { toolRoles } from '../../src/checks/tool-roles.ts';
import { CertificateStore } from '../../src/judge/certificate.ts';
import { Certifier } from '../../src/judge/certifier.ts';
import { JudgeConfigSchema } from '../../src/judge/config.ts';
import { Emitter } from '../../src/judge/emit.ts';
import { FaultReporter } from '../../src/judge/fault.ts';
import { newCounters } from '../../src/judge/judge-stats.ts';
import { invocationIdentity, ledgerKey, inputDigests } from '../../src/judge/ledger/protocol.ts';
import type { ResultRecord } from '../../src/judge/ledger/record.ts';
import type { ParsedAnswer } from '../../src/judge/parse-answers.ts';
import { SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { notSampled } from '../../src/judge/window-fates.ts';
import { NO_PROVENANCE } from '../../src/findings/provenance/provenance.ts';
import { extractWindows, windowRequests } from '../../src/windows/extract.ts';
import { boundCertificate } from './certificate-fixture.ts';
import { CHECKS, deployRun } from './judge-harness.ts';

const cfg = JudgeConfigSchema.parse({ enabled: true, client: { baseUrl: 'http://127.0.0.1:9/v1', model: 'judge' }, sampling: { rate: 0 } });
const id = invocationIdentity(cfg, 'c'.repeat(64));
const t = deployRun();
const checks = runChecks(t, CHECKS);
const outbound = toolRoles(t, CHECKS).outbound;
const requests = windowRequests(t, checks, outbound, cfg.sampling, id.windowPolicyDigest);
const [window] = extractWindows(t, requests, cfg.windowPolicy, id.windowPolicyDigest).windows;
const sure = (option: ParsedAnswer['option']): ParsedAnswer[] =>
  SEMANTIC_QUESTIONS.map((q, i) => ({
    questionId: q.id,
    option: i === 0 ? option : 'no',
    support: 'unresolved',
    probabilities: i === 0 ? { [option]: 0.97, no: 0.03 } : { no: 0.97, yes: 0.03 },
  }));

describe('certify', () => {
  it('lets a positive act only under a certificate bound to the window kind and the served model', () => {
    const store = new CertificateStore([{ id: 'q0-event', cert: boundCertificate(cfg, window!.kind, { servedModel: 'served' }) }]);
    const c = new Certifier(store, id, cfg.decision);
    expect(c.certified()[SEMANTIC_QUESTIONS[0]!.id]).toBe(true);
    const acted = c.answers(sure('yes'), window!, 'served');
    expect(acted[0]).toMatchObject({ option: 'yes', certificateId: 'q0-event', recommendation: { action: 'act', reason: 'calibrated' } });
    expect(acted.slice(1).every((a) => a.recommendation.action === 'record')).toBe(true);
    expect(c.answers(sure('yes'), window!, 'another-model')[0]).toMatchObject({
      certificateId: null,
      recommendation: { action: 'escalate', reason: 'certificate-served-model-mismatch' },
    });
    expect(new Certifier(new CertificateStore([]), id, cfg.decision).answers(sure('yes'), window!, 'served')[0]!.recommendation).toMatchObject({
      action: 'escalate',
      reason: 'uncalibrated',
    });
  });

  it('hands out a copy of what is certified', () => {
    const c = new Certifier(undefined, id, cfg.decision);
    c.certified()[SEMANTIC_QUESTIONS[0]!.id] = true;
    expect(Object.values(c.certified()).every((v) => v === false)).toBe(true);
  });
});

describe('emit', () => {
  const result = (): ResultRecord => ({
    v: 1,
    type: 'result',
    key: ledgerKey(t.key, window!),
    inputDigest: inputDigests(id, window!).input,
    owner: 'o',
    requestedModel: 'judge',
    servedModel: 'served',
    windowPolicyDigest: window!.policyDigest,
    failure: { kind: 'timeout', message: 'no answer within 30000 ms' },
    answers: SEMANTIC_QUESTIONS.map((q) => ({
      questionId: q.id,
      questionVersion: q.version,
      option: null,
      probabilities: null,
      unseenBound: null,
      support: null,
      recommendation: { action: 'escalate', route: null, reason: 'timeout' },
      certificateId: null,
    })),
    recommendation: { action: 'escalate', route: null, reason: 'a question escalated' },
    receipt: { promptTokens: null, completionTokens: null, totalTokens: null, cost: null, currency: null, attempts: 1 },
    recordedAt: 't',
  });

  it('hands on nine findings per window (eight judged and the computed repetition) and counts them', () => {
    const counters = newCounters();
    const handed: string[] = [];
    const e = new Emitter((f) => handed.push(...f.map((x) => x.finding_id)), counters, new FaultReporter(counters.faults));
    const ids = e.emit(t, checks, window!, result(), NO_PROVENANCE);
    expect(ids).toHaveLength(9);
    expect(handed).toEqual(ids);
    expect(counters).toMatchObject({ findings: 9, alarms: 0 });
  });

  it('answers no ids, and reports an emit fault, when the findings cannot be handed on', () => {
    const counters = newCounters();
    const e = new Emitter(
      () => {
        throw new Error('sink closed');
      },
      counters,
      new FaultReporter(counters.faults),
    );
    expect(e.emit(t, checks, window!, result(), NO_PROVENANCE)).toEqual([]);
    expect(counters.faults).toEqual({ emit: 1 });
  });
});

describe('window fates', () => {
  it('names every window the policy could ask for and did not, with the reason: trigger off or the rate', () => {
    const off = { ...cfg.sampling, triggers: { ...cfg.sampling.triggers, terminal: false } };
    const asked = windowRequests(t, checks, outbound, off, id.windowPolicyDigest);
    const missed = notSampled(t, checks, outbound, off, id.windowPolicyDigest, asked);
    expect(missed.map((m) => [m.kind, m.reason, m.detail])).toEqual([
      ['turn', 'trigger-off', 'trigger off: terminal'],
      ['agent', 'rate', 'rate 0: not in the deterministic sample'],
    ]);
    expect(
      notSampled(
        t,
        checks,
        outbound,
        { ...cfg.sampling, rate: 1, triggers: { l0Hit: true, outbound: true, terminal: true } },
        id.windowPolicyDigest,
        windowRequests(t, checks, outbound, { ...cfg.sampling, rate: 1, triggers: { l0Hit: true, outbound: true, terminal: true } }, id.windowPolicyDigest),
      ),
    ).toEqual([]);
  });
});
