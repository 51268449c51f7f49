import type { ResultRecord } from '../../../src/judge/ledger/record.ts';
import { certifiableQuestionById } from '../../../src/judge/question-catalog.ts';
import type { AnswerOption } from '../../../src/judge/questions.ts';

const H = (c: string) => c.repeat(64);

/**
 * A result record of a layer or verifier decision point on one window, as the walk records it:
 * its questions answered `options` in order (the routing question first), probability `p` on
 * the chosen option. Bound to a layer, request contract and evaluator, served by `served-1`.
 */
export function layerResult(
  windowId: string,
  point: string,
  answers: readonly [questionId: string, option: AnswerOption | null][],
  p = 0.9,
  over: Partial<ResultRecord> = {},
): ResultRecord {
  return {
    v: 1,
    type: 'result',
    key: { point, runId: `run-${windowId}`, invocationId: windowId },
    inputDigest: H('a'),
    owner: 'o',
    requestedModel: 'judge',
    servedModel: 'served-1',
    windowPolicyDigest: H('b'),
    windowKind: 'turn',
    requestContractDigest: H(point.startsWith('verify-') ? 'd' : 'c'),
    evaluatorDigest: H('e'),
    failure: null,
    answers: answers.map(([questionId, option], i) => ({
      questionId,
      questionVersion: certifiableQuestionById(questionId)?.version ?? '1',
      option,
      probabilities: option === null ? null : { [option]: p },
      unseenBound: null,
      support: 'unresolved',
      recommendation: { action: 'record', route: null, reason: i === 0 ? 'policy' : 'companion' },
      certificateId: null,
    })),
    recommendation: { action: 'record', route: null, reason: 'policy' },
    receipt: { promptTokens: null, completionTokens: null, totalTokens: null, cost: null, currency: null, attempts: 1 },
    recordedAt: 'x',
    ...over,
  };
}
