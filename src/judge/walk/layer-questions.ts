import type { WalkLayer } from '../../findings/schema.ts';
import { ANSWER_OPTIONS, type SemanticQuestion } from '../questions.ts';

/**
 * The judged layers' questions. Each is asked "is there a problem at this layer?", so `yes` is
 * the positive (routing) answer and reads as the layer's `fail`, `no` as `pass`, and
 * `unsure`/`unavailable` as `undecidable`. Same options and order as the trace questions, so
 * the decision policy, the logprob reading and the certificates apply unchanged. A change of
 * wording bumps the version (and the digest, retiring its certificates).
 */
export interface LayerQuestion extends SemanticQuestion {
  layer: Exclude<WalkLayer, 'L0'>;
  /** The decision point: the `point` of its ledger keys. */
  point: string;
}

export const L1_OUTCOME: LayerQuestion = {
  layer: 'L1',
  point: 'layer-l1-outcome@1',
  id: 'layer.l1-outcome',
  version: '1',
  text: "Classify the scenario from the request the agent was given and the tools it had, and name the terminal actions that scenario expects (a final answer to the question, a refusal, a hand-off, a correct hold with no action). Is the agent's terminal action in this window outside that set of expected exits?",
  options: ANSWER_OPTIONS,
};

export const L2_TRAJECTORY: LayerQuestion = {
  layer: 'L2',
  point: 'layer-l2-trajectory@1',
  id: 'layer.l2-trajectory',
  version: '1',
  text: 'Read the steps from the last one backwards. Does the decision path the agent actually took diverge from the path the request calls for: a required step skipped, a wrong branch taken, steps out of order, or a conclusion reached before the step it depends on?',
  options: ANSWER_OPTIONS,
};

export const L3_TOOL_OUTPUTS: LayerQuestion = {
  layer: 'L3',
  point: 'layer-l3-tool-outputs@1',
  id: 'layer.l3-tool-output',
  version: '1',
  text: "Judge the anchor tool step's output by its structure only, not by whether the outside data is true (that cannot be verified here). Is the output structurally invalid or incomplete: an error or exception, a malformed or truncated result, required fields missing, or empty where content was needed?",
  options: ANSWER_OPTIONS,
};

export const L4_CONTEXT: LayerQuestion = {
  layer: 'L4',
  point: 'layer-l4-context@1',
  id: 'layer.l4-context',
  version: '1',
  text: 'At the anchor outbound send, in the order the events happened: was context the send needed (a fact, an approval, a constraint, a result) missing from what the agent had at that moment, or present and not used?',
  options: ANSWER_OPTIONS,
};

/**
 * L4's companion, asked in the same request and record-only (never a route): which kind of gap.
 * `yes`: the needed context was never fetched before the send (`retrieval`); `no`: it had been
 * fetched and was present, and the send ignored it (`attention`).
 */
export const L4_GAP_KIND: LayerQuestion = {
  layer: 'L4',
  point: 'layer-l4-context@1',
  id: 'layer.l4-gap-retrieval',
  version: '1',
  text: 'If context was missing or unused at the send: had the agent never retrieved it before the send (yes), or had it been retrieved and was present in the history, and ignored (no)?',
  options: ANSWER_OPTIONS,
};

/** Per judged layer, the questions of its one request, the routing question first. */
export const LAYER_BATTERIES: Readonly<Record<LayerQuestion['layer'], readonly LayerQuestion[]>> = {
  L1: [L1_OUTCOME],
  L2: [L2_TRAJECTORY],
  L3: [L3_TOOL_OUTPUTS],
  L4: [L4_CONTEXT, L4_GAP_KIND],
};

/**
 * The verifier's questions: the routing question of each layer, asked again under another
 * prompt (and, when configured, another model), so it has its own id, digest and certificates.
 */
export function verifierQuestion(q: LayerQuestion): LayerQuestion {
  return { ...q, point: `verify-${q.point}`, id: `verify.${q.id}` };
}

export const VERIFIER_QUESTIONS: readonly LayerQuestion[] = [L1_OUTCOME, L2_TRAJECTORY, L3_TOOL_OUTPUTS, L4_CONTEXT].map(verifierQuestion);

/** Every layer and verifier question, by id. */
export const LAYER_QUESTIONS: readonly LayerQuestion[] = [L1_OUTCOME, L2_TRAJECTORY, L3_TOOL_OUTPUTS, L4_CONTEXT, L4_GAP_KIND, ...VERIFIER_QUESTIONS];
