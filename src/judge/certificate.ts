import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.ts';
import { canonicalDigest } from '../core/digest.ts';
import { EvidenceRefSchema } from '../core/evidence-ref.ts';
import { WINDOW_KINDS, type WindowKind } from '../windows/window.ts';
import type { Certification } from './decision-policy.ts';
import { CERTIFIABLE_QUESTION_IDS, certifiableQuestionById } from './question-catalog.ts';
import { ANSWER_OPTIONS, questionDigest } from './questions.ts';

/**
 * The format `trajwatch calibrate` writes: it binds the request contract, the layer and the
 * evaluator, and carries the 95 % interval for kappa that it was issued on.
 */
export const CERTIFICATE_FORMAT = 'trajwatch.certificate/3';
/**
 * The first format, which bound neither the request contract, the layer (window kind) nor the
 * evaluator. Such files still load (start-up is not refused) but never qualify:
 * `certificate-format-outdated`. Recalibrate to replace them.
 */
export const OUTDATED_CERTIFICATE_FORMAT = 'trajwatch.certificate/1';
/**
 * The second format: bound like the current one, but issued on kappa alone, however small the
 * sample (five labels could certify). It loads and never qualifies (`certificate-format-outdated`).
 */
export const KAPPA_ONLY_CERTIFICATE_FORMAT = 'trajwatch.certificate/2';
/**
 * The interval a current certificate is issued on (`calibration/kappa-interval.ts` computes it):
 * a certificate naming another level or method does not load.
 */
export const KAPPA_INTERVAL_LEVEL = 0.95;
export const KAPPA_INTERVAL_METHOD = 'fleiss-cohen-everitt|wilson-agreement';
const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

const certificateFields = {
  /** A trace question, a layer question or a verifier question (`question-catalog.ts`). */
  questionId: z.enum(CERTIFIABLE_QUESTION_IDS as [string, ...string[]]),
  questionVersion: z.string().min(1),
  /** Digest of the question's id, version, wording and option order. */
  questionDigest: hex64,
  optionOrder: z.array(z.enum(ANSWER_OPTIONS)).min(2),
  windowPolicyDigest: hex64,
  requestedModel: z.string().min(1),
  servedModel: z.string().min(1),
  goldN: z.int().min(0),
  kappa: z.number().min(-1).max(1),
  agreement: z.number().min(0).max(1),
  /** The minimum kappa in force when it was issued. */
  minKappa: z.number().min(0).max(1),
  /** The gold file and ledger it was computed from; at least one. */
  evidenceRefs: z.array(EvidenceRefSchema).min(1),
  issuedAt: z.string().min(1),
};

/**
 * A calibration certificate: the evidence that one question, asked of one model through one
 * evaluator, request contract, window policy and window kind, agrees with independent human
 * labels. Malformed certificates are refused at start-up; a well-formed one below the bar (or
 * of the outdated format) simply does not qualify (its question escalates).
 */
const bindings = {
  /** The layer it was calibrated on: an event-window certificate says nothing about turns or agents. */
  windowKind: z.enum(WINDOW_KINDS),
  /** `requestContractDigest`: prompt version, system message, response format, request options. */
  requestContractDigest: hex64,
  /** `evaluatorIdentity(...).digest`: endpoint, model, retry and pricing policy (no credentials). */
  evaluatorDigest: hex64,
};

export const CertificateSchema = z
  .discriminatedUnion('format', [
    z.strictObject({
      format: z.literal(CERTIFICATE_FORMAT),
      ...certificateFields,
      ...bindings,
      /** The 95 % interval for kappa of its gold sample (`kappa-interval.ts`); it qualifies on `lower`. */
      kappaInterval: z.strictObject({
        level: z.literal(KAPPA_INTERVAL_LEVEL),
        method: z.literal(KAPPA_INTERVAL_METHOD),
        lower: z.number().min(-1).max(1),
        upper: z.number().min(-1).max(1),
      }),
    }),
    z.strictObject({ format: z.literal(KAPPA_ONLY_CERTIFICATE_FORMAT), ...certificateFields, ...bindings }),
    z.strictObject({ format: z.literal(OUTDATED_CERTIFICATE_FORMAT), ...certificateFields }),
  ])
  .superRefine((c, ctx) => {
    if (c.format === CERTIFICATE_FORMAT && !(c.kappaInterval.lower <= c.kappa && c.kappa <= c.kappaInterval.upper)) {
      ctx.addIssue({
        code: 'custom',
        path: ['kappaInterval'],
        message: `the interval [${c.kappaInterval.lower}, ${c.kappaInterval.upper}] does not hold its kappa ${c.kappa}`,
      });
    }
  });

export type Certificate = z.infer<typeof CertificateSchema>;
/** A certificate of the format `trajwatch calibrate` writes now. */
export type CurrentCertificate = Extract<Certificate, { format: typeof CERTIFICATE_FORMAT }>;

/** What a certificate must match at decision time. */
export interface CertificationContext {
  questionId: string;
  windowPolicyDigest: string;
  windowKind: WindowKind;
  requestContractDigest: string;
  evaluatorDigest: string;
  requestedModel: string;
  /** Null when the server did not say which model served the request: nothing can match. */
  servedModel: string | null;
  minKappa: number;
}

/** Certificates installed at start-up, by question. */
export class CertificateStore {
  readonly #byQuestion = new Map<string, { id: string; cert: Certificate }[]>();

  constructor(certificates: readonly { id: string; cert: Certificate }[]) {
    for (const c of certificates) {
      const list = this.#byQuestion.get(c.cert.questionId) ?? [];
      list.push(c);
      this.#byQuestion.set(c.cert.questionId, list);
    }
  }

  /** Digest of every installed certificate's name and content: part of each invocation's inputs. */
  digest(): string {
    const all = [...this.#byQuestion.values()].flat().map((c) => ({ id: c.id, cert: c.cert }));
    all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return canonicalDigest(all);
  }

  get size(): number {
    let n = 0;
    for (const l of this.#byQuestion.values()) n += l.length;
    return n;
  }

  /**
   * Whether a certificate qualifies this question now: it must be of the current format and
   * bind the current question (version, digest, option order), the window policy, the window
   * kind, the request contract, the evaluator, the requested and the served model, and carry
   * gold n > 0 and a 95 % interval for kappa whose lower bound is at or above the minimum. A
   * certificate's reason is its first mismatch in that order.
   */
  certify(ctx: CertificationContext): Certification {
    const list = this.#byQuestion.get(ctx.questionId);
    if (list === undefined || list.length === 0) return { valid: false, reason: 'uncalibrated' };
    // Among several certificates (one per layer, say) the reason is the closest one's: the
    // mismatch found last in the checking order, after the most bindings matched.
    let reason: Mismatch = MISMATCHES[0];
    for (const { id, cert } of list) {
      const mismatch = mismatchOf(cert, ctx, true);
      if (mismatch === undefined) return { valid: true, certificateId: id };
      if (MISMATCHES.indexOf(mismatch) > MISMATCHES.indexOf(reason)) reason = mismatch;
    }
    return { valid: false, reason };
  }

  /**
   * Whether an installed certificate would qualify this question for answers served by the
   * model it names: everything `certify` checks except the served model, which is known only
   * per answer, and the window kind: it qualifies when it does for any kind. What the
   * `trajwatch_calibration_certified` gauge shows.
   */
  qualifies(ctx: Omit<CertificationContext, 'servedModel' | 'windowKind'>): boolean {
    return (this.#byQuestion.get(ctx.questionId) ?? []).some(
      ({ cert }) => cert.format === CERTIFICATE_FORMAT && mismatchOf(cert, { ...ctx, windowKind: cert.windowKind, servedModel: null }, false) === undefined,
    );
  }
}

/** Why a certificate does not qualify, in checking order. */
const MISMATCHES = [
  'certificate-format-outdated',
  'certificate-stale-question',
  'certificate-window-policy-mismatch',
  'certificate-layer-mismatch',
  'certificate-request-contract-mismatch',
  'certificate-evaluator-mismatch',
  'certificate-model-mismatch',
  'certificate-served-model-mismatch',
  'certificate-below-minimum',
] as const;
type Mismatch = (typeof MISMATCHES)[number];

/** The first reason `cert` does not qualify in `ctx`, or undefined when it does. */
function mismatchOf(cert: Certificate, ctx: CertificationContext, checkServedModel: boolean): Mismatch | undefined {
  if (cert.format !== CERTIFICATE_FORMAT) return 'certificate-format-outdated';
  const q = certifiableQuestionById(ctx.questionId)!;
  if (cert.questionVersion !== q.version || cert.questionDigest !== questionDigest(q) || cert.optionOrder.join() !== q.options.join()) {
    return 'certificate-stale-question';
  }
  if (cert.windowPolicyDigest !== ctx.windowPolicyDigest) return 'certificate-window-policy-mismatch';
  if (cert.windowKind !== ctx.windowKind) return 'certificate-layer-mismatch';
  if (cert.requestContractDigest !== ctx.requestContractDigest) return 'certificate-request-contract-mismatch';
  if (cert.evaluatorDigest !== ctx.evaluatorDigest) return 'certificate-evaluator-mismatch';
  if (cert.requestedModel !== ctx.requestedModel) return 'certificate-model-mismatch';
  if (checkServedModel && (ctx.servedModel === null || cert.servedModel !== ctx.servedModel)) return 'certificate-served-model-mismatch';
  if (cert.goldN <= 0 || cert.kappaInterval.lower < ctx.minKappa) return 'certificate-below-minimum';
  return undefined;
}

/**
 * Read every `*.json` in `dir` as a certificate. A missing directory means none installed;
 * a file that does not parse or validate refuses start-up, naming the file and every problem.
 */
export async function loadCertificates(dir: string): Promise<CertificateStore> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new CertificateStore([]);
    throw err;
  }
  const issues: string[] = [];
  const loaded: { id: string; cert: Certificate }[] = [];
  for (const name of names) {
    const path = join(dir, name);
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(path, 'utf8'));
    } catch (err) {
      issues.push(`${path}: not JSON (${(err as Error).message})`);
      continue;
    }
    const r = CertificateSchema.safeParse(raw);
    if (!r.success) {
      for (const i of r.error.issues) issues.push(`${path}: ${i.path.join('.') || '(root)'}: ${i.message}`);
      continue;
    }
    loaded.push({ id: name.replace(/\.json$/, ''), cert: r.data });
  }
  if (issues.length > 0) throw new ConfigError(issues, `certificates in ${dir}`);
  return new CertificateStore(loaded);
}
