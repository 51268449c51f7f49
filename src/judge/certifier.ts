import type { TraceWindow } from '../windows/window.ts';
import type { CertificateStore } from './certificate.ts';
import type { JudgeConfig } from './config.ts';
import { decideQuestion, decideRecordOnly, SUPPORT_POLICY } from './decision-policy.ts';
import type { InvocationIdentity } from './ledger/protocol.ts';
import type { AnswerRecord } from './ledger/record.ts';
import type { ParsedAnswer } from './parse-answers.ts';
import { SEMANTIC_QUESTIONS } from './questions.ts';

/**
 * Certification: which questions an installed certificate qualifies for this configuration
 * (fixed at open), and, for each parsed answer, the certificate that lets it act and the
 * recommendation the decision policy gives it. No bounds of its own: the certificates are
 * those loaded at start-up, and an answer is always decided — at worst it escalates.
 */
export class Certifier {
  readonly #certs: CertificateStore | undefined;
  readonly #id: InvocationIdentity;
  readonly #decision: JudgeConfig['decision'];
  readonly #certified: Record<string, boolean>;

  constructor(certs: CertificateStore | undefined, id: InvocationIdentity, decision: JudgeConfig['decision']) {
    this.#certs = certs;
    this.#id = id;
    this.#decision = decision;
    this.#certified = Object.fromEntries(
      SEMANTIC_QUESTIONS.map((q) => [
        q.id,
        certs?.qualifies({
          questionId: q.id,
          windowPolicyDigest: id.windowPolicyDigest,
          requestContractDigest: id.contractDigest,
          evaluatorDigest: id.evaluatorDigest,
          requestedModel: id.requestedModel,
          minKappa: decision.minKappa,
        }) ?? false,
      ]),
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
      const certification = this.#certs!.certify({
        questionId: q.id,
        windowPolicyDigest: window.policyDigest,
        windowKind: window.kind,
        requestContractDigest: this.#id.contractDigest,
        evaluatorDigest: this.#id.evaluatorDigest,
        requestedModel: this.#id.requestedModel,
        servedModel,
        minKappa: this.#decision.minKappa,
      });
      const recommendation = decideQuestion(a, this.#decision.questions[q.id]!, certification);
      return {
        questionId: q.id,
        questionVersion: q.version,
        option: a.option,
        probabilities: a.probabilities,
        unseenBound: a.unseenBound ?? null,
        support: a.support,
        recommendation,
        certificateId: certification.valid ? certification.certificateId : null,
        supportProbability: a.supportProbability ?? null,
        supportRecommendation: decideRecordOnly(SUPPORT_POLICY, a.support),
      };
    });
  }
}
