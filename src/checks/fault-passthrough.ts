import { textOf } from '../ingest/long-text.ts';
import { hasClockSkew, hiddenToolCalls } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import type { PatternHit } from './hit.ts';
import type { ChecksConfig } from './config.ts';
import { hides, UNREAD_SPAN, UNSPANNED_CALL } from './capture-table.ts';
import type { L0CheckDefinition, SilenceReason } from './l0-check.ts';
import { describeStep, excerpt, firstLine, ref } from './hit-text.ts';
import { readTask } from './message-shape.ts';
import { failurePropagations } from './propagated-failure.ts';
import { compiledRules } from './rules.ts';
import { agentRuns, type AgentRun } from './run-outcome.ts';
import { stepFailures, type StepFailure } from './step-failure.ts';

interface Pending {
  parts: string[];
  evidence: Step[];
}

/**
 * `fault-passthrough`: a failure carried on as if it had succeeded. Two forms, one hit per
 * anchor (the failed step):
 * - the failure's distinctive text (first line of its error, at least `passthroughMinChars`)
 *   is *used* later: in a later tool call's arguments (outbound sends included), in the task
 *   handed to a delegated agent (an agent step below another agent; read by shape, so the
 *   history replayed to it does not count), or in the answer of the failure's own run when
 *   that run reports success (see `agentRuns`). Text that is only replayed — llm prompts,
 *   graph nodes and event-loop spans carrying the conversation so far, a root output that is
 *   the whole message state — is not a carrier: handing the error back to the model is how
 *   agents recover;
 * - complete captures only, and not for a tool a capture gap may hide a call of: a run reports success while a tool of that run failed and never
 *   succeeded afterwards in it (same tool name). Anchored at the first failure after the
 *   tool's last success, so later failures add evidence without moving the anchor.
 */
export function faultPassthrough(t: Trajectory, cfg: ChecksConfig): PatternHit<'fault-passthrough'>[] {
  const rules = compiledRules(cfg);
  const failures = stepFailures(t, rules);
  const { runs, runOf, underAgent } = agentRuns(t, failures);
  const pending = new Map<number, Pending>();
  const add = (index: number, part: string, evidence: Step[]) => {
    const entry = pending.get(index) ?? { parts: [], evidence: [] };
    entry.parts.push(part);
    for (const step of evidence) if (!entry.evidence.includes(step)) entry.evidence.push(step);
    pending.set(index, entry);
  };

  // A delegated agent's task, read by shape once however many failures are compared with it.
  const tasks = new Map<number, string | undefined>();
  const taskOf = (j: number): string | undefined => {
    if (!tasks.has(j)) tasks.set(j, readTask(textOf(t.steps[j]!.input!)));
    return tasks.get(j);
  };

  // A failure that propagated through enclosing spans is one failure: its reappearances are
  // claimed at the step where it began (as error-output reports it), never once per span.
  const links = failurePropagations(t, cfg);

  failures.forEach((failure, i) => {
    const failed = t.steps[i];
    if (failure === undefined || failed === undefined) return;
    const origin = links[i]?.origin ?? i;
    const needle = distinctiveText(failure, cfg);
    if (needle === undefined) return;
    const carriers: Step[] = [];
    const where: string[] = [];
    for (let j = i + 1; j < t.steps.length; j++) {
      const later = t.steps[j]!;
      if (later.startTimeUnixNano < failed.endTimeUnixNano) continue; // began before the failure was known
      const field = carrierField(later, underAgent[j]!, needle, () => taskOf(j));
      if (field !== undefined) {
        carriers.push(later);
        where.push(`${describeStep(later)} ${field}`);
      }
    }
    const run = runs[runOf[i]!];
    const answer = run === undefined ? undefined : reportedAnswer(t, run);
    if (answer !== undefined && answer.from !== i && answer.step.endTimeUnixNano >= failed.endTimeUnixNano && answer.text.includes(needle)) {
      carriers.push(answer.step);
      where.push(`the answer of its run (${describeStep(answer.step)})`);
    }
    if (carriers.length === 0) return;
    const quoted = excerpt(needle, cfg.options.detailExcerptChars);
    add(origin, `error text of ${describeStep(failed)} ("${quoted}") reappears in ${where.join(', ')}`, [t.steps[origin]!, failed, ...carriers]);
  });

  // Absence of a later success is claimed from complete captures only, and not for a tool
  // whose later attempt the capture may be missing (a nameless tool step, or a requested call
  // of that tool with no tool step: `hiddenToolCalls`), nor from timestamps that contradict the
  // span tree ("later" is read from them).
  if (t.complete && !hasClockSkew(t.steps)) {
    const hidden = hiddenToolCalls(t.steps);
    for (const run of runs) {
      const answer = reportedAnswer(t, run);
      if (answer === undefined) continue;
      for (const [toolName, failedIndexes] of unretriedToolFailures(t, run, failures)) {
        if (hidden.unnamed || hidden.names.has(toolName)) continue;
        const first = failedIndexes[0]!;
        const times = failedIndexes.length === 1 ? 'once' : `${failedIndexes.length} times`;
        add(first, `tool "${toolName}" failed ${times} with no later success, and its run ended reporting success (${describeStep(answer.step)})`, [
          ...failedIndexes.map((k) => t.steps[k]!),
          answer.step,
        ]);
      }
    }
  }

  return [...pending.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, entry]) => ({
      pattern: 'fault-passthrough' as const,
      anchor: t.steps[index]!.id,
      detail: entry.parts.join('; '),
      evidence: entry.evidence.map(ref),
    }));
}

/** The run's answer when the run reports success (did not fail, answer readable), else undefined. */
function reportedAnswer(t: Trajectory, run: AgentRun): { text: string; from: number; step: Step } | undefined {
  if (run.outcome.kind !== 'answer') return undefined;
  return { text: run.outcome.text, from: run.outcome.from, step: t.steps[run.outcome.from]! };
}

/** The text whose reappearance counts: the error's first line, cut to the configured length. */
function distinctiveText(failure: StepFailure, cfg: ChecksConfig): string | undefined {
  if (failure.text === undefined) return undefined;
  const line = firstLine(failure.text).slice(0, cfg.options.passthroughMaxChars);
  return line.length >= cfg.options.passthroughMinChars ? line : undefined;
}

/**
 * Which field of a later step uses the text, or undefined: a tool call's arguments, or a
 * delegated agent's task. Llm prompts and other steps' inputs replay, they do not use.
 */
function carrierField(step: Step, delegated: boolean, needle: string, task: () => string | undefined): string | undefined {
  if (step.kind === 'tool') return step.args?.raw.includes(needle) === true ? 'arguments' : undefined;
  // The raw input is searched first: only an input that holds the text at all is read by shape.
  if (step.kind === 'agent' && delegated && textOf(step.input)?.includes(needle) === true) {
    return task()?.includes(needle) === true ? 'task' : undefined;
  }
  return undefined;
}

/**
 * Per tool name, the failed attempts of a run after the tool's last success in it, for tools
 * whose last attempt before the run's end failed. In order of each tool's first such failure.
 */
function unretriedToolFailures(t: Trajectory, run: AgentRun, failures: readonly (StepFailure | undefined)[]): Map<string, number[]> {
  const open = new Map<string, number[]>();
  for (const i of run.steps) {
    const step = t.steps[i]!;
    if (step.kind !== 'tool' || step.toolName === undefined) continue;
    if (step.endTimeUnixNano > run.endUnixNano) continue;
    if (failures[i] === undefined) open.delete(step.toolName);
    else if (open.has(step.toolName)) open.get(step.toolName)!.push(i);
    else open.set(step.toolName, [i]);
  }
  return new Map([...open.entries()].sort(([, a], [, b]) => a[0]! - b[0]!));
}

export const faultPassthroughCheck: L0CheckDefinition<'fault-passthrough'> = {
  pattern: 'fault-passthrough',
  run: faultPassthrough,
  // A failure carried on as success is what a reviewer should see first.
  severity: 'high',
  claim: (a) => `the failure of ${a} was carried on as if it had succeeded`,
  absence: 'some-forms',
  silentOnIncomplete: 'no error text reappeared among the captured steps; the unretried-failure form runs on complete captures only',
  hiddenBy: {
    'tool-name-not-captured': hides("a nameless tool step may be the failed tool's later success or carry the error text, so neither form is claimed absent"),
    'tool-call-not-captured': hides(`${UNSPANNED_CALL} may have failed, carried an error text in its arguments, or been the failed tool's later success`),
    'tool-args-not-captured': hides('a later tool call whose arguments were not captured may carry the error text'),
    'tool-result-not-captured': hides('a result not captured may be an error payload that was carried on'),
    'unread-convention': hides(`${UNREAD_SPAN} may have failed, carried the error text, or been the failed tool's later success`),
    'clock-skew': hides(
      'a carrier must start after the failure ended and "no later success" reads order: timestamps that contradict the span tree support neither',
    ),
  },
  silence: (t, cfg) => unreadOutcome(t, cfg),
};

/**
 * `fault-passthrough` compares a failure with the answer of its own run (a carrier, and "the
 * run reported success"): when a run that holds a failure has no readable answer
 * (`run-outcome.ts`: no output captured, tool calls pending...), that part was not checked.
 */
function unreadOutcome(t: Trajectory, cfg: ChecksConfig): SilenceReason | undefined {
  const failures = stepFailures(t, compiledRules(cfg));
  if (!failures.some((f) => f !== undefined)) return undefined;
  const { runs, runOf } = agentRuns(t, failures);
  for (let i = 0; i < failures.length; i++) {
    if (failures[i] === undefined) continue;
    const run = runs[runOf[i]!];
    if (run === undefined || run.outcome.kind !== 'absent' || run.outcome.reason === 'run-failed') continue;
    return {
      reason: 'run-outcome-not-captured',
      detail: `the answer of a run holding a failure cannot be read (${run.outcome.reason}): whether the failure reached it, or the run reported success, is not claimed`,
    };
  }
  return undefined;
}
