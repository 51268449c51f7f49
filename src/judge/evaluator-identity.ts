import { canonicalDigest } from '../core/digest.ts';
import type { JudgeClientConfig } from './client.ts';

/**
 * Version of how the client turns a provider's reply into an answer and a receipt (transport,
 * retry classification, usage and receipt interpretation). Bump it when those semantics change:
 * the evaluator digest changes, and certificates issued under the old semantics stop qualifying.
 */
export const EVALUATOR_VERSION = '2';

/** Query parameter names that carry credentials; they never enter an identity. */
const CREDENTIAL_PARAM = /(^|[-_])(key|apikey|api[-_]?key|token|access[-_]?token|secret|password|sig|signature|auth|authorization)$/i;

/** The parts of the judge configuration that change what an answer or a receipt means. */
export interface EvaluatorParts {
  version: string;
  /** Scheme, host, port, path and non-credential query of `baseUrl`; user info and credential parameters removed. */
  endpoint: string;
  model: string;
  retry: { retries: number; backoffMs: number; timeoutMs: number };
  pricing: JudgeClientConfig['pricing'];
  /** The answer protocol when structured; absent for `lines`, the protocol every identity had before the field. */
  answerFormat?: Exclude<JudgeClientConfig['answerFormat'], 'lines'>;
}

export interface EvaluatorIdentity {
  /** sha256 of the canonical parts: bound in every certificate and every invocation's inputs. */
  digest: string;
  parts: EvaluatorParts;
}

/**
 * Who answers and how the answer is accounted for, as a deterministic digest. It covers the
 * endpoint (provider), the requested model, the retry policy, the pricing policy and the answer
 * protocol (a server asked for `json_object` is a different evaluator than one asked for lines). It never
 * covers credentials: the API key, the name of its environment variable, a password in the URL
 * or a key-like query parameter are left out, since a digest of a secret is still sensitive and
 * the digest is written to certificates, ledgers and findings. The budget is left out too: it
 * decides whether a call is made, not what its answer means.
 */
export function evaluatorIdentity(cfg: JudgeClientConfig): EvaluatorIdentity {
  const parts: EvaluatorParts = {
    version: EVALUATOR_VERSION,
    endpoint: endpointIdentity(cfg.baseUrl),
    model: cfg.model,
    retry: { retries: cfg.retries, backoffMs: cfg.backoffMs, timeoutMs: cfg.timeoutMs },
    pricing: cfg.pricing,
    ...(cfg.answerFormat === 'lines' ? {} : { answerFormat: cfg.answerFormat }),
  };
  return { digest: canonicalDigest(parts), parts };
}

/** `baseUrl` without credentials, trailing slashes or fragment; query parameters sorted. */
export function endpointIdentity(baseUrl: string): string {
  const url = new URL(baseUrl);
  const params = [...url.searchParams.entries()]
    .filter(([name]) => !CREDENTIAL_PARAM.test(name))
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  const query = params.length === 0 ? '' : `?${new URLSearchParams(params).toString()}`;
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}${query}`;
}
