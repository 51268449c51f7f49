import { describe, expect, it } from 'vitest';
import {
  combineActions,
  decideQuestion,
  DecisionPolicySchema,
  QuestionPolicySchema,
  type Certification,
  type QuestionAnswer,
} from '../../src/judge/decision-policy.ts';

const policy = QuestionPolicySchema.parse({});
const certified: Certification = { valid: true, certificateId: 'cert-1' };
const uncalibrated: Certification = { valid: false, reason: 'uncalibrated' };
const ans = (option: QuestionAnswer['option'], probabilities: QuestionAnswer['probabilities'], unseenBound = 0): QuestionAnswer => ({
  option,
  probabilities,
  unseenBound,
});

describe('decision policy table (defaults: yes→act, no→record, unsure→escalate, unavailable→record; p ≥ 0.8, margin ≥ 0.3)', () => {
  it.each<[string, QuestionAnswer, Certification, string, string]>([
    ['confident calibrated yes', ans('yes', { yes: 0.95, no: 0.05 }), certified, 'act', 'calibrated'],
    ['confident uncalibrated yes', ans('yes', { yes: 0.95, no: 0.05 }), uncalibrated, 'escalate', 'uncalibrated'],
    [
      'yes with a stale certificate',
      ans('yes', { yes: 0.95 }),
      { valid: false, reason: 'certificate-stale-question' },
      'escalate',
      'certificate-stale-question',
    ],
    ['yes without probabilities', ans('yes', null), certified, 'escalate', 'probabilities-unavailable'],
    ['yes below probability', ans('yes', { yes: 0.7, no: 0.3 }), certified, 'escalate', 'below-probability'],
    ['yes below margin', ans('yes', { yes: 0.8, no: 0.2, unsure: 0 }, 0.6), certified, 'escalate', 'below-margin'],
    ['yes tied', ans('yes', { yes: 0.5, no: 0.5 }), certified, 'escalate', 'tie'],
    ['no', ans('no', { no: 0.9, yes: 0.1 }), uncalibrated, 'record', 'policy'],
    ['no without probabilities', ans('no', null), uncalibrated, 'record', 'policy'],
    ['no but nearly yes', ans('no', { no: 0.55, yes: 0.45 }), uncalibrated, 'escalate', 'near-act'],
    ['no tied with unsure', ans('no', { no: 0.5, unsure: 0.5 }), uncalibrated, 'escalate', 'tie'],
    ['unsure', ans('unsure', { unsure: 0.99 }), certified, 'escalate', 'policy'],
    ['unavailable', ans('unavailable', { unavailable: 0.99 }), certified, 'record', 'policy'],
    ['no answer (provider failure)', ans(null, null), certified, 'escalate', 'provider-failure'],
  ])('%s → %s', (_name, answer, cert, action, reason) => {
    const r = decideQuestion(answer, policy, cert);
    expect(r).toEqual({ action, route: action === 'act' ? 'coordinator-alarm' : null, reason });
  });

  it('follows a configured mapping: an option mapped to record never acts', () => {
    const p = QuestionPolicySchema.parse({ options: { yes: 'record' } });
    expect(decideQuestion(ans('yes', { yes: 1 }), p, certified).action).toBe('record');
  });

  it('escalate beats act beats record across a window', () => {
    expect(combineActions(['record', 'act', 'escalate'])).toBe('escalate');
    expect(combineActions(['record', 'act', 'record'])).toBe('act');
    expect(combineActions(['record', 'record'])).toBe('record');
    expect(combineActions([])).toBe('record');
  });

  it('lets configuration raise the minimum kappa, never lower it', () => {
    expect(DecisionPolicySchema.parse({ minKappa: 0.8 }).minKappa).toBe(0.8);
    expect(DecisionPolicySchema.safeParse({ minKappa: 0.5 }).success).toBe(false);
    expect(DecisionPolicySchema.parse({}).minKappa).toBe(0.6);
    expect(DecisionPolicySchema.safeParse({ questions: { 'no.such-question': {} } }).success).toBe(false);
  });
});
