import { L4_GAP_KIND, LAYER_QUESTIONS } from './walk/layer-questions.ts';
import { SEMANTIC_QUESTIONS, type SemanticQuestion } from './questions.ts';

/**
 * Every question trajwatch asks, in report order: the eight trace questions, the layer
 * questions (L4's record-only gap kind among them), the verifier's. Gold rows may name any of
 * them; `calibrate` and `reliability` report each.
 */
export const REPORTED_QUESTIONS: readonly SemanticQuestion[] = [...SEMANTIC_QUESTIONS, ...LAYER_QUESTIONS];

/**
 * Companion classifications asked in a routing question's request (L4's gap kind): they never
 * route, so they are labeled, calibrated and reported like any question but never certified.
 */
export const RECORD_ONLY_QUESTION_IDS: readonly string[] = [L4_GAP_KIND.id];

/**
 * Every question a certificate may bind: the trace questions, the layers' routing questions and
 * the verifier's. One list so a certificate for a layer question is read and checked by the
 * same rules as one for a trace question.
 */
export const CERTIFIABLE_QUESTIONS: readonly SemanticQuestion[] = REPORTED_QUESTIONS.filter((q) => !RECORD_ONLY_QUESTION_IDS.includes(q.id));
export const CERTIFIABLE_QUESTION_IDS = CERTIFIABLE_QUESTIONS.map((q) => q.id);

export function certifiableQuestionById(id: string): SemanticQuestion | undefined {
  return CERTIFIABLE_QUESTIONS.find((q) => q.id === id);
}

export function reportedQuestionById(id: string): SemanticQuestion | undefined {
  return REPORTED_QUESTIONS.find((q) => q.id === id);
}

export const isRecordOnly = (id: string): boolean => RECORD_ONLY_QUESTION_IDS.includes(id);

/** Position in report order (unknown ids last). */
export function reportOrder(id: string): number {
  const i = REPORTED_QUESTIONS.findIndex((q) => q.id === id);
  return i === -1 ? REPORTED_QUESTIONS.length : i;
}

const VERIFIER_PREFIX = 'verify.';

/**
 * The question whose gold labels score answers to `id`. A verifier question is its layer's
 * routing question asked again (same wording, same window), so it has one true answer there:
 * the layer question's gold scores it, and a labeler labels it once. Every other question is
 * its own.
 */
export function goldQuestionId(id: string): string {
  if (!id.startsWith(VERIFIER_PREFIX)) return id;
  const asked = id.slice(VERIFIER_PREFIX.length);
  return LAYER_QUESTIONS.some((q) => q.id === asked) ? asked : id;
}

/** The questions a labeler may label: every reported question that is its own gold (not a verifier's). */
export function labelQuestionById(id: string): SemanticQuestion | undefined {
  return goldQuestionId(id) === id ? reportedQuestionById(id) : undefined;
}
