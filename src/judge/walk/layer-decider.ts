import type { TraceWindow } from '../../windows/window.ts';
import type { CertificateStore } from '../certificate.ts';
import { answerFields, certifyOnWindow, type CertificateBinding } from '../certifier.ts';
import { decideQuestion, type QuestionPolicy } from '../decision-policy.ts';
import type { Battery } from '../invoke.ts';
import type { AnswerRecord } from '../ledger/record.ts';
import type { ParsedAnswer } from '../parse-answers.ts';
import type { LayerQuestion } from './layer-questions.ts';

/** What a layer's (or the verifier's) certificate must bind besides its question and window kind. */
export interface LayerBinding extends CertificateBinding {
  windowPolicyDigest: string;
}

/**
 * A layer's battery: its questions, and each parsed answer decided by the decision policy
 * against the certificates installed for *that* question on *that* window kind — an L1
 * certificate says nothing about L3, a trace-question certificate nothing about any layer, and
 * a layer's certificate nothing about its verifier. The first question routes; the companions
 * after it (L4's gap kind) are record-only classifications and never act.
 */
export class LayerDecider implements Battery {
  readonly questions: readonly LayerQuestion[];
  readonly #certs: CertificateStore;
  readonly #binding: LayerBinding;
  readonly #policy: QuestionPolicy;

  constructor(questions: readonly LayerQuestion[], certs: CertificateStore, binding: LayerBinding, policy: QuestionPolicy) {
    this.questions = questions;
    this.#certs = certs;
    this.#binding = binding;
    this.#policy = policy;
  }

  decide(parsed: readonly ParsedAnswer[], window: TraceWindow, servedModel: string | null): AnswerRecord[] {
    return parsed.map((a, i) => {
      const q = this.questions[i]!;
      const base = answerFields(q, a);
      if (i > 0) return { ...base, recommendation: { action: 'record' as const, route: null, reason: 'companion' }, certificateId: null };
      const certification = certifyOnWindow(this.#certs, this.#binding, q.id, window, servedModel);
      return {
        ...base,
        recommendation: decideQuestion(a, this.#policy, certification),
        certificateId: certification.valid ? certification.certificateId : null,
      };
    });
  }
}
