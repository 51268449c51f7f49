import { LAYER_QUESTIONS } from './layers/layer-questions.ts';
import { SEMANTIC_QUESTIONS, type SemanticQuestion } from './questions.ts';

/**
 * Every question a certificate may bind: the eight trace questions, the layer questions and
 * the verifier's. One list so a certificate for a layer question is read and checked by the
 * same rules as one for a trace question.
 */
export const CERTIFIABLE_QUESTIONS: readonly SemanticQuestion[] = [...SEMANTIC_QUESTIONS, ...LAYER_QUESTIONS];
export const CERTIFIABLE_QUESTION_IDS = CERTIFIABLE_QUESTIONS.map((q) => q.id);

export function certifiableQuestionById(id: string): SemanticQuestion | undefined {
  return CERTIFIABLE_QUESTIONS.find((q) => q.id === id);
}
