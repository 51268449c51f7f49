import type { Recommendation } from '../decision-policy.ts';
import type { ResultRecord } from '../ledger/record.ts';

/** What the verifier's call came to: its recorded result, or why it was not judged. */
export type VerifierReading =
  | { kind: 'answered'; result: ResultRecord; replay: boolean }
  | { kind: 'not-judged'; fate: 'refused' | 'deferred'; reason: string };

/** Only an answer that would act (route to `coordinator-alarm`) is verified: nothing else can be downgraded. */
export function needsVerification(primary: Recommendation): boolean {
  return primary.action === 'act';
}

/**
 * The downgrade-only rule. The verifier is a second, independent call (another prompt, another
 * model when configured) decided under its own certificate. Its answer can take an `act` down to
 * `escalate` — it disagreed, was not certified, failed, or was not judged — and can never raise
 * anything: a primary that does not act is returned as it is, whatever the verifier said. Pure.
 */
export function verifiedRecommendation(primary: Recommendation, verifier: VerifierReading | undefined): Recommendation {
  if (!needsVerification(primary)) return primary;
  const down = (why: string): Recommendation => ({ action: 'escalate', route: null, reason: `verifier-${why}` });
  if (verifier === undefined) return down('not-asked');
  if (verifier.kind === 'not-judged') return down(`${verifier.fate}:${verifier.reason}`);
  const r = verifier.result;
  if (r.failure !== null) return down(`failed:${r.failure.kind}`);
  const a = r.answers[0];
  if (a === undefined || a.option === null) return down('no-answer');
  if (a.option !== 'yes') return down('disagreed');
  if (a.recommendation.action !== 'act') return down(a.recommendation.reason);
  return { ...primary, reason: 'verified' };
}
