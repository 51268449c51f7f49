import { hiddenToolCalls } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import type { L0Hit } from './check-result.ts';
import type { ChecksConfig } from './config.ts';
import { finalStepIndex } from './final-step.ts';
import { describeStep, excerpt, firstLine, ref } from './hit-text.ts';
import { compiledRules } from './rules.ts';
import { stepFailures, type StepFailure } from './step-failure.ts';

interface Pending {
  parts: string[];
  evidence: Step[];
}

/**
 * `fault-passthrough`: a failure carried on as if it had succeeded. Two forms, one hit per
 * anchor (the failed step):
 * - the failure's distinctive text (first line of its error, at least `passthroughMinChars`)
 *   reappears in a later tool's arguments, a later non-llm step's input, or the final output
 *   of a run that reports success. LLM prompts are not searched: handing the error back to
 *   the model is how agents recover, not passthrough;
 * - complete captures only, and not for a tool a capture gap may hide a call of: the run
 *   reports success while a failed tool never succeeded afterwards (same tool name). Anchored
 *   at that tool's last failure.
 */
export function faultPassthrough(t: Trajectory, cfg: ChecksConfig): L0Hit[] {
  const rules = compiledRules(cfg);
  const failures = stepFailures(t, rules);
  const finalIndex = finalStepIndex(t);
  const finalStep = t.steps[finalIndex];
  const runReportsSuccess =
    finalStep !== undefined && failures[finalIndex] === undefined && finalStep.result !== undefined;
  const pending = new Map<number, Pending>();
  const add = (index: number, part: string, evidence: Step[]) => {
    const entry = pending.get(index) ?? { parts: [], evidence: [] };
    entry.parts.push(part);
    for (const step of evidence) if (!entry.evidence.includes(step)) entry.evidence.push(step);
    pending.set(index, entry);
  };

  failures.forEach((failure, i) => {
    const failed = t.steps[i];
    if (failure === undefined || failed === undefined) return;
    const needle = distinctiveText(failure, cfg);
    if (needle === undefined) return;
    const carriers: Step[] = [];
    const where: string[] = [];
    for (let j = i + 1; j < t.steps.length; j++) {
      const later = t.steps[j]!;
      if (later.startTimeUnixNano < failed.endTimeUnixNano) continue; // began before the failure was known
      const field = carrierField(later, needle);
      if (field !== undefined) {
        carriers.push(later);
        where.push(`${describeStep(later)} ${field}`);
      }
    }
    if (
      runReportsSuccess &&
      finalIndex !== i &&
      finalStep.endTimeUnixNano >= failed.endTimeUnixNano &&
      finalStep.result!.includes(needle)
    ) {
      carriers.push(finalStep);
      where.push(`the final output of ${describeStep(finalStep)}`);
    }
    if (carriers.length === 0) return;
    const quoted = excerpt(needle, cfg.options.detailExcerptChars);
    add(i, `error text of ${describeStep(failed)} ("${quoted}") reappears in ${where.join(', ')}`, [failed, ...carriers]);
  });

  // "No later success" is an absence claim: not from an incomplete capture, nor for a tool
  // whose later attempt the capture may be missing (a nameless tool step, or a requested call
  // of that tool with no tool step).
  if (t.complete && runReportsSuccess) {
    const hidden = hiddenToolCalls(t.steps);
    for (const [toolName, failedIndexes] of unretriedToolFailures(t, failures, finalStep.endTimeUnixNano)) {
      if (hidden.unnamed || hidden.names.has(toolName)) continue;
      const last = failedIndexes[failedIndexes.length - 1]!;
      const times = failedIndexes.length === 1 ? 'once' : `${failedIndexes.length} times`;
      add(
        last,
        `tool "${toolName}" failed ${times} with no later success, and the run ended reporting success (${describeStep(finalStep)})`,
        [t.steps[last]!, ...failedIndexes.slice(0, -1).map((k) => t.steps[k]!), finalStep],
      );
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

/** The text whose reappearance counts: the error's first line, cut to the configured length. */
function distinctiveText(failure: StepFailure, cfg: ChecksConfig): string | undefined {
  if (failure.text === undefined) return undefined;
  const line = firstLine(failure.text).slice(0, cfg.options.passthroughMaxChars);
  return line.length >= cfg.options.passthroughMinChars ? line : undefined;
}

/** Which field of a later step carries the text, or undefined. LLM steps are never carriers. */
function carrierField(step: Step, needle: string): string | undefined {
  if (step.kind === 'llm') return undefined;
  if (step.args?.raw.includes(needle)) return 'arguments';
  if (step.input?.includes(needle)) return 'input';
  return undefined;
}

/**
 * Per tool name, the failed attempts after its last success, for tools whose last attempt
 * before the run's end failed. In order of each tool's first such failure.
 */
function unretriedToolFailures(
  t: Trajectory,
  failures: readonly (StepFailure | undefined)[],
  runEndUnixNano: bigint,
): Map<string, number[]> {
  const open = new Map<string, number[]>();
  t.steps.forEach((step, i) => {
    if (step.kind !== 'tool' || step.toolName === undefined) return;
    if (step.endTimeUnixNano > runEndUnixNano) return;
    if (failures[i] === undefined) open.delete(step.toolName);
    else if (open.has(step.toolName)) open.get(step.toolName)!.push(i);
    else open.set(step.toolName, [i]);
  });
  return new Map([...open.entries()].sort(([, a], [, b]) => a[0]! - b[0]!));
}
