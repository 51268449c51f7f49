import { z } from 'zod';
import { QuestionPolicySchema } from '../decision-policy.ts';
import { L1_OUTCOME, L2_TRAJECTORY, L3_TOOL_OUTPUTS, L4_CONTEXT } from './layer-questions.ts';

/**
 * The layered walk (`judge.walk`). Off by default: turned on, every sampled trajectory costs
 * one to `1 + 1 + 2·maxWindowsPerLayer` more judge calls (plus a verifier call per positive
 * answer) on top of the trace questions, against the same budget — an operator decides that
 * spend. With it off nothing about the trace questions changes.
 *
 * @example WalkConfigSchema.parse({ enabled: true, verifier: { model: 'other-judge' } })
 */
export const WalkConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /**
     * The stopping rule: after L1, stop when L1 passes and every criterion is answerable. False
     * asks every layer of every sampled trajectory (what `scripts/docs/walk-cost.ts` compares against).
     */
    stopEarly: z.boolean().default(true),
    /** L3 and L4: windows read per layer; the rest are named `not-read` and the layer cannot pass. */
    maxWindowsPerLayer: z.int().min(1).max(16).default(2),
    /** Per layer routing question, its policy (same table as the trace questions: `yes` acts by default). */
    questions: z
      .strictObject({
        [L1_OUTCOME.id]: QuestionPolicySchema,
        [L2_TRAJECTORY.id]: QuestionPolicySchema,
        [L3_TOOL_OUTPUTS.id]: QuestionPolicySchema,
        [L4_CONTEXT.id]: QuestionPolicySchema,
      })
      .prefault({}),
    /**
     * The verifier asked on every answer that would act: another prompt, and another model when
     * `model` is set (null: the judge's). Its own certificate; it can only downgrade.
     */
    verifier: z
      .strictObject({
        model: z.string().min(1).nullable().default(null),
      })
      .prefault({}),
  })
  .prefault({});

export type WalkConfig = z.infer<typeof WalkConfigSchema>;
