import type { Trajectory } from '../assemble/trajectory.ts';
import type { PatternHit } from './hit.ts';
import type { ChecksConfig } from './config.ts';
import { hasClockSkew } from '../assemble/capture-gaps.ts';
import { HIDING_REASONS, type L0CheckDefinition } from './l0-check.ts';
import { ref } from './hit-text.ts';
import { guardedBefore, roleMayBeHidden, roleName, toolRoles } from './tool-roles.ts';

/**
 * `out-of-order-gate`: a gate that ran after the outbound action it should have guarded. The
 * action a gate is taken to guard is the latest outbound call that started before it; the hit
 * fires when that call had no successful gate before it. One hit per such gate, anchored at
 * the gate, with the action as second evidence. "Had no successful gate before it" is read as
 * `gateCoverage` says: a gate used up by an earlier send to the same target covers nothing.
 *
 * The "no gate before the action" half is an absence claim: complete captures only, with no
 * gate or outbound call that the capture may be missing (`roleMayBeHidden`): an unseen gate
 * may have guarded the action, an unseen action may be the one the gate followed.
 */
export function outOfOrderGate(t: Trajectory, cfg: ChecksConfig): PatternHit<'out-of-order-gate'>[] {
  if (!t.complete || hasClockSkew(t.steps) || roleMayBeHidden(t, cfg, ['gates', 'outbound'])) return [];
  const roles = toolRoles(t, cfg);
  if (roles.outbound.length === 0 || roles.gates.length === 0) return [];
  const guarded = guardedBefore(t, roles);
  const hits: PatternHit<'out-of-order-gate'>[] = [];
  let next = 0; // index into roles.outbound of the first action not yet before the gate
  for (const g of roles.gates) {
    while (next < roles.outbound.length && roles.outbound[next]! < g) next++;
    if (next === 0) continue;
    const action = t.steps[roles.outbound[next - 1]!]!;
    if (guarded(action)) continue;
    const gate = t.steps[g]!;
    hits.push({
      pattern: 'out-of-order-gate',
      anchor: gate.id,
      detail: `gate ${roleName(gate)} ran after outbound ${roleName(action)} (span ${action.id}), which had no successful gate before it`,
      evidence: [ref(gate), ref(action)],
    });
  }
  return hits;
}

export const outOfOrderGateCheck: L0CheckDefinition<'out-of-order-gate'> = {
  pattern: 'out-of-order-gate',
  run: outOfOrderGate,
  // A gate after the fact is a defect worth a look.
  severity: 'medium',
  claim: (a) => `${a} ran after the action it guards`,
  absence: 'always',
  silentOnIncomplete: 'not run: "no gate before the action" is a claim of absence, made from complete captures only',
  silence: (t, cfg, ctx) =>
    hasClockSkew(t.steps)
      ? { reason: 'clock-skew', detail: 'not run: clock skew between the spans makes which ran first unknowable from their timestamps' }
      : ctx.gaps.length > 0 && roleMayBeHidden(t, cfg, ['gates', 'outbound'])
      ? { reason: ctx.reasonOf(HIDING_REASONS), detail: 'not run: the capture may be missing a gate or an outbound call' }
      : undefined,
};
