import type { Trajectory } from '../assemble/trajectory.ts';
import type { L0Hit } from './check-result.ts';
import type { ChecksConfig } from './config.ts';
import { describeStep, excerpt, ref } from './hit-text.ts';
import { compiledRules } from './rules.ts';
import { stepFailures } from './step-failure.ts';

/**
 * `error-output`: one hit per failed step (status error, `exception` event, `error.type`, or a
 * tool result the error-payload rules recognize), anchored at the step, in trajectory order.
 */
export function errorOutput(t: Trajectory, cfg: ChecksConfig): L0Hit[] {
  const rules = compiledRules(cfg);
  const hits: L0Hit[] = [];
  const failures = stepFailures(t, rules);
  for (const [i, step] of t.steps.entries()) {
    const failure = failures[i];
    if (failure === undefined) continue;
    const kind = failure.type === undefined ? failure.source : `${failure.source} ${failure.type}`;
    const said = failure.text === undefined ? '' : `: ${excerpt(failure.text, cfg.options.detailExcerptChars)}`;
    hits.push({
      pattern: 'error-output',
      anchor: step.id,
      detail: `${describeStep(step)} failed (${kind})${said}`,
      evidence: [ref(step)],
    });
  }
  return hits;
}
