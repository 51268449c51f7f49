import { hiddenToolCalls } from '../assemble/capture-gaps.ts';
import { hides, type GapCondition, type GapDecision } from './capture-table.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import { compiledRules, toolClassMatch } from './rules.ts';
import type { ChecksConfig } from './config.ts';
import { sendTarget } from './send-target.ts';
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

/** Whether an outbound call is covered by a gate, and if not, why. */
export type Coverage =
  | { covered: true }
  /** No successful gate ended before it started. */
  | { covered: false }
  /**
   * The gates before it were used up: the send at step index `endedAt` acted again on the
   * target that the earlier send at `usedBy` had acted on (`endedAt` is this call or earlier).
   */
  | { covered: false; usedBy: number; endedAt: number };

/**
 * What a gate covers: a successful gate guards the outbound calls that start after it ended, in
 * trajectory order, until one of them acts on a target (`sendTarget`: tool name and recipient)
 * that an earlier call under the same gates already acted on. From that call on it covers
 * nothing more; the next successful gate to end covers afresh. So "approve, send" and "approve
 * once, send once" (again and again) are covered, as is one approval before one send to each of
 * several recipients; a second send to the same target, or every send after it, is not. A
 * failed send does not use a gate up (its retry stays covered), and a send whose target is
 * unknown (arguments not captured) never uses one up: it cannot be said to repeat another.
 *
 * Returns, per index of `roles.outbound` in order, that call's coverage.
 */
export function gateCoverage(t: Trajectory, roles: ToolRoles): Coverage[] {
  const gateEnds: bigint[] = [];
  for (const g of roles.gates) if (!roles.failed[g]) gateEnds.push(t.steps[g]!.endTimeUnixNano);
  gateEnds.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: Coverage[] = [];
  let ended = 0; // gates that ended at or before the current call's start
  const used = new Map<string, number>(); // target → index of the send that used it, since the latest gate
  let usedUp: { usedBy: number; endedAt: number } | undefined;
  for (const i of roles.outbound) {
    const send = t.steps[i]!;
    const before = ended;
    while (ended < gateEnds.length && gateEnds[ended]! <= send.startTimeUnixNano) ended++;
    if (ended > before) {
      used.clear();
      usedUp = undefined;
    }
    if (ended === 0) {
      out.push({ covered: false });
      continue;
    }
    const target = sendTarget(send);
    const repeats = target === undefined ? undefined : used.get(target);
    if (usedUp === undefined && repeats !== undefined) usedUp = { usedBy: repeats, endedAt: i };
    if (usedUp !== undefined) {
      out.push({ covered: false, ...usedUp });
      continue;
    }
    out.push({ covered: true });
    if (target !== undefined && !roles.failed[i]) used.set(target, i);
  }
  return out;
}

/** Whether an outbound step is covered by a gate (see {@link gateCoverage}); other steps are not. */
export function guardedBefore(t: Trajectory, roles: ToolRoles): (step: Step) => boolean {
  const coverage = gateCoverage(t, roles);
  const covered = new Set<Step>();
  roles.outbound.forEach((i, k) => {
    if (coverage[k]!.covered) covered.add(t.steps[i]!);
  });
  return (step) => covered.has(step);
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

/**
 * Whether one of the steps `spanIds` names may play a role of `classes`: a tool step whose name
 * is in the class, an agent step in the gate class (as `toolRoles` classes them), or a tool step
 * with no name (it may be anything). For the capture table's conditional cells.
 */
export function spansMayPlay(t: Trajectory, cfg: ChecksConfig, spanIds: readonly string[], classes: readonly ('gates' | 'outbound')[]): boolean {
  const rules = compiledRules(cfg);
  const wanted = new Set(spanIds);
  return t.steps.some((step) => {
    if (!wanted.has(step.id)) return false;
    const name = step.kind === 'tool' ? step.toolName : step.kind === 'agent' ? step.agentName : undefined;
    if (name === undefined || name.trim() === '') return step.kind === 'tool';
    return classes.some((c) => (c === 'outbound' ? step.kind === 'tool' : true) && toolClassMatch(name, rules[c]) !== undefined);
  });
}

/** A capture-table condition: a missing result hides a gate's failure only on a step that may be a gate. */
export const GATE_STEP: GapCondition = {
  what: 'a step it names may be a gate (gate-class name, or no name)',
  holds: (gap, t, cfg) => spansMayPlay(t, cfg, gap.spanIds, ['gates']),
};

/** A capture-table condition: missing arguments hide a send's target only on a step that may be a send. */
export const OUTBOUND_STEP: GapCondition = {
  what: 'a step it names may be an outbound call (outbound-class name, or no name)',
  holds: (gap, t, cfg) => spansMayPlay(t, cfg, gap.spanIds, ['outbound']),
};

/** The `tool-result-not-captured` row of both gate checks: an unseen result may be the gate's failure. */
export const GATE_RESULT_NOT_CAPTURED: GapDecision = hides(
  'a gate whose result was not captured may have failed with an error payload, guarding nothing',
  GATE_STEP,
);
