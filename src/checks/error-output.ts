import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import type { PatternHit } from './hit.ts';
import type { ChecksConfig } from './config.ts';
import { cannotHide, hides, UNREAD_SPAN, UNSPANNED_CALL } from './capture-table.ts';
import type { L0CheckDefinition } from './l0-check.ts';
import { describeStep, excerpt, ref } from './hit-text.ts';
import { failurePropagations } from './propagated-failure.ts';
import { compiledRules } from './rules.ts';
import { stepFailures } from './step-failure.ts';

/** How many of the steps a failure propagated through a detail names; evidence lists them all. */
const NAMED_PROPAGATORS = 3;

/**
 * `error-output`: one hit per failure (status error, `exception` event, `error.type`, or a tool
 * result the error-payload rules recognize), anchored at the step it happened in, in trajectory
 * order. A failure that propagated to enclosing steps (`failurePropagations`) is one failure:
 * reported once, at the innermost step, with the steps it propagated through as evidence.
 */
export function errorOutput(t: Trajectory, cfg: ChecksConfig): PatternHit<'error-output'>[] {
  const failures = stepFailures(t, compiledRules(cfg));
  const links = failurePropagations(t, cfg);
  // Each failed step repeats at most one inside it and is repeated by at most one around it.
  const repeatedBy = new Map<number, number>();
  links.forEach((link, outer) => {
    if (link !== undefined) repeatedBy.set(link.from, outer);
  });
  const hits: PatternHit<'error-output'>[] = [];
  for (const [i, step] of t.steps.entries()) {
    const failure = failures[i];
    if (failure === undefined || links[i] !== undefined) continue;
    const through: Step[] = [];
    for (let j = repeatedBy.get(i); j !== undefined; j = repeatedBy.get(j)) through.push(t.steps[j]!);
    const kind = failure.type === undefined ? failure.source : `${failure.source} ${failure.type}`;
    const said = failure.text === undefined ? '' : `: ${excerpt(failure.text, cfg.options.detailExcerptChars)}`;
    hits.push({
      pattern: 'error-output',
      anchor: step.id,
      detail: `${describeStep(step)} failed (${kind})${said}${propagatedText(through)}`,
      evidence: [ref(step), ...through.map(ref)],
    });
  }
  return hits;
}

function propagatedText(through: readonly Step[]): string {
  if (through.length === 0) return '';
  const named = through.slice(0, NAMED_PROPAGATORS).map(describeStep).join(', ');
  const more = through.length > NAMED_PROPAGATORS ? ` and ${through.length - NAMED_PROPAGATORS} more` : '';
  return `; propagated to ${named}${more}`;
}

export const errorOutputCheck: L0CheckDefinition<'error-output'> = {
  pattern: 'error-output',
  run: errorOutput,
  // A failed step is often recovered.
  severity: 'low',
  claim: (a) => `${a} failed`,
  absence: 'none',
  silentOnIncomplete: 'no failed step among the captured steps; spans not captured may hold one',
  hiddenBy: {
    'tool-name-not-captured': cannotHide("a nameless tool step's status, exception events and result are still read"),
    'tool-call-not-captured': hides(`${UNSPANNED_CALL} may have failed`),
    'tool-args-not-captured': cannotHide('a failure is read from status, exception events, error.type and the result, never from the arguments'),
    'tool-result-not-captured': hides('a result not captured may be an error payload (a traceback, MCP isError) on a step whose status says nothing'),
    'unread-convention': hides(`${UNREAD_SPAN} may carry its failure where it is not read`),
    'clock-skew': cannotHide('a failure is read from the step itself: the order of steps does not decide whether one happened'),
  },
};
