import type { TraceWindow } from '../windows/window.ts';
import type { CertificateStore } from './certificate.ts';
import type { JudgeConfig } from './config.ts';
import { decideQuestion, decideRecordOnly, SUPPORT_POLICY, type Certification } from './decision-policy.ts';
import type { InvocationIdentity } from './ledger/protocol.ts';
import type { AnswerRecord } from './ledger/record.ts';
import type { ParsedAnswer } from './parse-answers.ts';
import { SEMANTIC_QUESTIONS } from './questions.ts';

/** What a certificate must bind besides its question and the window's policy and kind. */
export interface CertificateBinding {
  requestContractDigest: string;
  evaluatorDigest: string;
  requestedModel: string;
  minKappa: number;
}

/**
 * The certification of one answer to `questionId` on `window`, served by `servedModel` (null:
 * the server did not say, so nothing matches): the trace questions' and the walk's alike.
 */
export function certifyOnWindow(
  certs: CertificateStore,
  binding: CertificateBinding,
  questionId: string,
  window: Pick<TraceWindow, 'policyDigest' | 'kind'>,
  servedModel: string | null,
): Certification {
  return certs.certify({
    questionId,
    windowPolicyDigest: window.policyDigest,
    windowKind: window.kind,
    requestContractDigest: binding.requestContractDigest,
    evaluatorDigest: binding.evaluatorDigest,
    requestedModel: binding.requestedModel,
    servedModel,
    minKappa: binding.minKappa,
  });
}

/**
 * Certification: which questions an installed certificate qualifies for this configuration
 * (fixed at open), and, for each parsed answer, the certificate that lets it act and the
 * recommendation the decision policy gives it. No bounds of its own: the certificates are
 * those loaded at start-up, and an answer is always decided — at worst it escalates.
 */
/** What every recorded answer carries of its question and the parsed reply, before it is decided. */
export function answerFields(
  q: { id: string; version: string },
  a: ParsedAnswer,
): Pick<AnswerRecord, 'questionId' | 'questionVersion' | 'option' | 'probabilities' | 'unseenBound' | 'support'> {
  return {
    questionId: q.id,
    questionVersion: q.version,
    option: a.option,
    probabilities: a.probabilities,
    unseenBound: a.unseenBound ?? null,
    support: a.support,
  };
}

export class Certifier {
  readonly #certs: CertificateStore | undefined;
  readonly #binding: CertificateBinding;
  readonly #decision: JudgeConfig['decision'];
  readonly #certified: Record<string, boolean>;

  constructor(certs: CertificateStore | undefined, id: InvocationIdentity, decision: JudgeConfig['decision']) {
    this.#certs = certs;
    this.#binding = {
      requestContractDigest: id.contractDigest,
      evaluatorDigest: id.evaluatorDigest,
      requestedModel: id.requestedModel,
      minKappa: decision.minKappa,
    };
    this.#decision = decision;
    this.#certified = Object.fromEntries(
      SEMANTIC_QUESTIONS.map((q) => [q.id, certs?.qualifies({ questionId: q.id, windowPolicyDigest: id.windowPolicyDigest, ...this.#binding }) ?? false]),
    );
  }

  /** Per question: whether an installed certificate qualifies it. A copy. */
  certified(): Record<string, boolean> {
    return { ...this.#certified };
  }

  /** The recorded answers of a parsed reply (one per semantic question, in order), each decided. */
  answers(parsed: readonly ParsedAnswer[], window: TraceWindow, servedModel: string | null): AnswerRecord[] {
    return parsed.map((a, i) => {
      const q = SEMANTIC_QUESTIONS[i]!;
      const certification = certifyOnWindow(this.#certs!, this.#binding, q.id, window, servedModel);
      const recommendation = decideQuestion(a, this.#decision.questions[q.id]!, certification);
      return {
        ...answerFields(q, a),
        recommendation,
        certificateId: certification.valid ? certification.certificateId : null,
        supportProbability: a.supportProbability ?? null,
        supportRecommendation: decideRecordOnly(SUPPORT_POLICY, a.support),
      };
    });
  }
}
