import { hiddenToolCalls } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import { compiledRules, toolClassMatch } from './rules.ts';
import type { ChecksConfig } from './config.ts';
import { stepFailures } from './step-failure.ts';

/** The outbound actions and gates of a trajectory, as indexes into `t.steps` in order. */
export interface ToolRoles {
  outbound: number[];
  gates: number[];
  /** Per step index: whether the step failed (gates that failed guard nothing). */
  failed: boolean[];
}

/**
 * Classify steps. Outbound: tool steps whose tool name is in the outbound class. Gates: tool
 * steps by tool name, and agent steps by agent name (a reviewer agent guards too), in the gate
 * class. A tool name in both classes goes to the class it matches first (see
 * `toolClassMatch`); a tie goes to outbound.
 */
export function toolRoles(t: Trajectory, cfg: ChecksConfig): ToolRoles {
  const rules = compiledRules(cfg);
  const failures = stepFailures(t, rules);
  const roles: ToolRoles = { outbound: [], gates: [], failed: [] };
  t.steps.forEach((step, i) => {
    roles.failed.push(failures[i] !== undefined);
    const name = step.kind === 'tool' ? step.toolName : step.kind === 'agent' ? step.agentName : undefined;
    if (name === undefined) return;
    const outboundAt = step.kind === 'tool' ? toolClassMatch(name, rules.outbound) : undefined;
    const gateAt = toolClassMatch(name, rules.gates);
    if (outboundAt !== undefined && (gateAt === undefined || outboundAt <= gateAt)) roles.outbound.push(i);
    else if (gateAt !== undefined) roles.gates.push(i);
  });
  return roles;
}

/**
 * Whether a successful gate finished before this step started: the time the earliest
 * successful gate ended, compared with the step's start.
 */
export function guardedBefore(t: Trajectory, roles: ToolRoles): (step: Step) => boolean {
  let earliestGateEnd: bigint | undefined;
  for (const g of roles.gates) {
    if (roles.failed[g]) continue;
    const end = t.steps[g]!.endTimeUnixNano;
    if (earliestGateEnd === undefined || end < earliestGateEnd) earliestGateEnd = end;
  }
  return (step) => earliestGateEnd !== undefined && earliestGateEnd <= step.startTimeUnixNano;
}

/** How a gate or outbound step is named in a detail. */
export function roleName(step: Step): string {
  return step.kind === 'agent' ? `agent "${step.agentName ?? step.name}"` : `tool "${step.toolName ?? step.name}"`;
}

/**
 * Whether the capture may be missing a tool call of one of `classes` (`hiddenToolCalls`): a
 * hidden call with no name could be anything; a requested call with no tool step could be
 * one when its name is in the class. Claims that no gate ran, or which action a gate followed,
 * are not made then.
 */
export function roleMayBeHidden(t: Trajectory, cfg: ChecksConfig, classes: readonly ('gates' | 'outbound')[]): boolean {
  const hidden = hiddenToolCalls(t.steps);
  if (hidden.unnamed) return true;
  if (hidden.names.size === 0) return false;
  const rules = compiledRules(cfg);
  for (const name of hidden.names) {
    if (classes.some((c) => toolClassMatch(name, rules[c]) !== undefined)) return true;
  }
  return false;
}

