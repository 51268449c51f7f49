import { canonicalDigest } from '../core/digest.ts';
import type { EvidenceRef } from '../core/evidence-ref.ts';
import { CERTIFICATE_FORMAT, type CurrentCertificate } from '../judge/certificate.ts';
import { certifiableQuestionById } from '../judge/question-catalog.ts';
import { questionDigest } from '../judge/questions.ts';
import type { CalibrationTarget, QuestionReport } from './calibrate.ts';

/**
 * Certificate making (`trajwatch calibrate`, unless `--dry-run`): a qualifying report → the certificate the
 * online judge loads (`judge/certificate.ts`) and gates alarms on (`judge/certifier.ts`).
 */

/** The certificate a qualifying report earns; a record-only question's is refused (it never qualifies). */
export function certificateFor(report: QuestionReport, minKappa: number, evidenceRefs: EvidenceRef[], issuedAt: string): CurrentCertificate {
  const q = certifiableQuestionById(report.target.questionId);
  if (q === undefined) throw new Error(`${report.target.questionId} is a record-only question: it is never certified`);
  return {
    format: CERTIFICATE_FORMAT,
    questionId: q.id,
    questionVersion: q.version,
    questionDigest: questionDigest(q),
    optionOrder: [...q.options],
    windowPolicyDigest: report.target.windowPolicyDigest,
    windowKind: report.target.windowKind!,
    requestContractDigest: report.target.requestContractDigest!,
    evaluatorDigest: report.target.evaluatorDigest!,
    requestedModel: report.target.requestedModel,
    servedModel: report.target.servedModel!,
    goldN: report.n,
    kappa: report.kappa!,
    agreement: report.agreement!,
    kappaInterval: {
      level: report.kappaInterval!.level,
      method: report.kappaInterval!.method,
      lower: report.kappaInterval!.lower,
      upper: report.kappaInterval!.upper,
    },
    minKappa,
    evidenceRefs,
    issuedAt,
  };
}

/** A stable file name for a target's certificate. */
export function certificateFileName(target: CalibrationTarget): string {
  return `${target.questionId}--${canonicalDigest(target).slice(0, 16)}.json`;
}
