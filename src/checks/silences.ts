import { captureGaps, hiddenToolCalls } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckSilence, L0Pattern } from './check-result.ts';
import type { ChecksConfig } from './config.ts';
import { compiledRules } from './rules.ts';
import { agentRuns } from './run-outcome.ts';
import { stepFailures } from './step-failure.ts';
import { roleMayBeHidden } from './tool-roles.ts';

/**
 * Which L0 patterns a complete capture's gaps kept from claiming absence, and why: the same
 * conditions the checks themselves apply (`roleMayBeHidden`, `hiddenToolCalls`), stated once so
 * that a consumer (the analysis manifest) never reads a silenced check as "none observed".
 * Incomplete captures are not covered here: there every absence claim is silent already.
 */
export function checkSilences(t: Trajectory, cfg: ChecksConfig): CheckSilence[] {
  const out: CheckSilence[] = [];
  const outcome = unreadOutcome(t, cfg);
  if (outcome !== undefined) out.push(outcome);
  const gaps = captureGaps(t.steps);
  if (gaps.length === 0) return out;
  const hidden = hiddenToolCalls(t.steps);
  const reasonOf = (wanted: readonly string[]) => gaps.find((g) => wanted.includes(g.reason))?.reason ?? gaps[0]!.reason;
  const hiding = ['tool-name-not-captured', 'tool-call-not-captured'];
  if (outcome === undefined && (hidden.unnamed || hidden.names.size > 0)) {
    out.push({
      pattern: 'fault-passthrough',
      reason: reasonOf(hiding),
      detail: 'the "no later success" form is not claimed for a tool whose later call the capture may be missing',
    });
  }
  if (gaps.some((g) => g.reason === 'tool-name-not-captured')) {
    out.push({ pattern: 'malformed-structure', reason: 'tool-name-not-captured', detail: 'a tool step without a tool name cannot be checked against a declared schema' });
  }
  if (roleMayBeHidden(t, cfg, ['gates'])) {
    out.push({ pattern: 'unguarded-send', reason: reasonOf(hiding), detail: 'not run: the capture may be missing a gate' });
  }
  if (roleMayBeHidden(t, cfg, ['gates', 'outbound'])) {
    out.push({ pattern: 'out-of-order-gate', reason: reasonOf(hiding), detail: 'not run: the capture may be missing a gate or an outbound call' });
  }
  return out;
}

/**
 * `fault-passthrough` compares a failure with the answer of its own run (a carrier, and "the
 * run reported success"): when a run that holds a failure has no readable answer
 * (`run-outcome.ts`: no output captured, tool calls pending...), that part was not checked.
 */
function unreadOutcome(t: Trajectory, cfg: ChecksConfig): CheckSilence | undefined {
  const failures = stepFailures(t, compiledRules(cfg));
  if (!failures.some((f) => f !== undefined)) return undefined;
  const { runs, runOf } = agentRuns(t, failures);
  for (let i = 0; i < failures.length; i++) {
    if (failures[i] === undefined) continue;
    const run = runs[runOf[i]!];
    if (run === undefined || run.outcome.kind !== 'absent' || run.outcome.reason === 'run-failed') continue;
    return {
      pattern: 'fault-passthrough',
      reason: 'run-outcome-not-captured',
      detail: `the answer of a run holding a failure cannot be read (${run.outcome.reason}): whether the failure reached it, or the run reported success, is not claimed`,
    };
  }
  return undefined;
}
