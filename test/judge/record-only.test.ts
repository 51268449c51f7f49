import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadCertificates } from '../../src/judge/certificate.ts';
import { decideRecordOnly, RecordOnlyPolicySchema, SUPPORT_POLICY } from '../../src/judge/decision-policy.ts';
import { readLedger } from '../../src/judge/ledger/ledger.ts';
import { SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { validCertificate } from './certificate-fixture.ts';
import { deployRun, harness, judgeAll, type Harness } from './judge-harness.ts';
import { answers, completion } from './scripted-chat-server.ts';

let h: Harness | undefined;
afterEach(() => h?.server.close());

describe('record-only policies (the support choices)', () => {
  it('must say recordOnly: true and map every option to record', () => {
    expect(SUPPORT_POLICY).toEqual({ recordOnly: true, options: { event: 'record', unresolved: 'record' } });
    expect(RecordOnlyPolicySchema.safeParse({ recordOnly: false, options: { event: 'record' } }).error?.issues[0]?.message).toContain('recordOnly: true');
    expect(RecordOnlyPolicySchema.safeParse({ recordOnly: true, options: { event: 'act' } }).error?.issues[0]?.message).toContain('must record');
    expect(RecordOnlyPolicySchema.safeParse({ recordOnly: true, options: { event: 'escalate' } }).success).toBe(false);
  });

  it('records a valid choice with reason record-only and escalates when there was no answer', () => {
    expect(decideRecordOnly(SUPPORT_POLICY, 'e3')).toEqual({ action: 'record', route: null, reason: 'record-only' });
    expect(decideRecordOnly(SUPPORT_POLICY, 'unresolved')).toEqual({ action: 'record', route: null, reason: 'record-only' });
    expect(decideRecordOnly(SUPPORT_POLICY, null)).toEqual({ action: 'escalate', route: null, reason: 'provider-failure' });
    expect(decideRecordOnly(SUPPORT_POLICY, null, 'timeout')).toEqual({ action: 'escalate', route: null, reason: 'timeout' });
  });

  it('cannot carry a certificate: a certificate for a support choice refuses start-up', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-ro-'));
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'support.json'), JSON.stringify(validCertificate({ questionId: `${SEMANTIC_QUESTIONS[0]!.id}.support` })));
    await expect(loadCertificates(dir)).rejects.toThrow(/support\.json.*questionId/s);
  });

  it("is recorded with each answer: the probability of the tokens that wrote the chosen id, and never changes the window's recommendation", async () => {
    h = await harness(
      (_body, n) => {
        if (n > 1) return { status: 500, body: { error: { message: 'overloaded' } } };
        const reply = completion(answers({ 0: { letter: 'B', support: 'e2', p: 0.99 } })) as {
          choices: { logprobs: { content: { token: string; logprob: number }[] } }[];
        };
        for (const t of reply.choices[0]!.logprobs.content) if (t.token === ' e2') t.logprob = Math.log(0.6);
        return { body: reply };
      },
      // The line protocol's reply, with the support id a token of its own.
      { retries: 0, answerFormat: 'lines' },
      { sampling: { rate: 0, triggers: { l0Hit: false, outbound: false } } },
    );
    await judgeAll(h.dataDir, h.cfg, [deployRun('ro-1')]);
    await judgeAll(h.dataDir, h.cfg, [deployRun('ro-2')]); // the server now fails
    const results = (await readLedger(join(h.dataDir, 'judge', 'ledger.jsonl'))).filter((r) => r.type === 'result');
    expect(results).toHaveLength(2);
    const [ok, failed] = results as Extract<(typeof results)[number], { type: 'result' }>[];
    expect(ok!.recommendation.action).toBe('record'); // every answer "no" records, the supports too
    expect(ok!.answers[0]).toMatchObject({ support: 'e2', supportRecommendation: { action: 'record', route: null, reason: 'record-only' } });
    expect(ok!.answers[0]!.supportProbability).toBeCloseTo(0.6, 12);
    expect(ok!.answers[1]).toMatchObject({ support: 'unresolved', supportProbability: 1 });
    expect(failed!.failure).toMatchObject({ kind: 'http', status: 500 });
    expect(
      failed!.answers.every(
        (a) => a.supportProbability === null && a.supportRecommendation?.action === 'escalate' && a.supportRecommendation.reason === 'http',
      ),
    ).toBe(true);
  });
});
