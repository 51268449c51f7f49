import { CERTIFICATE_FORMAT, type Certificate } from '../../src/judge/certificate.ts';
import { questionDigest, SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';

const Q = SEMANTIC_QUESTIONS[0]!;

/** A well-formed certificate for the first question; override what the test is about. */
export function validCertificate(over: Partial<Certificate> = {}, policy = 'd'.repeat(64)): Certificate {
  return {
    format: CERTIFICATE_FORMAT,
    questionId: Q.id,
    questionVersion: Q.version,
    questionDigest: questionDigest(Q),
    optionOrder: [...Q.options],
    windowPolicyDigest: policy,
    requestedModel: 'judge',
    servedModel: 'judge-served',
    goldN: 40,
    kappa: 0.72,
    agreement: 0.9,
    minKappa: 0.6,
    evidenceRefs: [{ kind: 'artifact', uri: 'file:/gold.jsonl', excerpt: 'sha256:00' }],
    issuedAt: '2026-01-01T00:00:00Z',
    ...over,
  };
}

