import { hasClockSkew } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { PatternHit } from './hit.ts';
import type { ChecksConfig } from './config.ts';
import { hides, UNREAD_SPAN, UNSPANNED_CALL } from './capture-table.ts';
import type { L0CheckDefinition } from './l0-check.ts';
import { ref } from './hit-text.ts';
import { guardedBefore, roleMayBeHidden, roleName, GATE_RESULT_NOT_CAPTURED, OUTBOUND_STEP, toolRoles } from './tool-roles.ts';

/**
 * `out-of-order-gate`: a gate that ran after the outbound action it should have guarded. The
 * action a gate is taken to guard is the latest outbound call that started before it; the hit
 * fires when that call had no successful gate before it. One hit per such gate, anchored at
 * the gate, with the action as second evidence. "Had no successful gate before it" is read as
 * `gateCoverage` says: a gate used up by an earlier send to the same target covers nothing.
 *
 * The "no gate before the action" half is an absence claim: complete captures only, with no
 * gate or outbound call that the capture may be missing (`roleMayBeHidden`): an unseen gate
 * may have guarded the action, an unseen action may be the one the gate followed; nor from
 * timestamps that contradict the span tree (`clock-skew`). Its manifest status follows its
 * capture-table row (`hiddenBy`).
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
  hiddenBy: {
    'tool-name-not-captured': hides('a nameless tool step may be a gate or an outbound call'),
    'tool-call-not-captured': hides(`${UNSPANNED_CALL} may be a gate, an outbound call, or a gate that failed`),
    'tool-args-not-captured': hides(
      'a send whose arguments were not captured has no known target, so whether it used a gate up, leaving the next action uncovered, is not known',
      OUTBOUND_STEP,
    ),
    'tool-result-not-captured': GATE_RESULT_NOT_CAPTURED,
    'unread-convention': hides(`${UNREAD_SPAN} may be a gate or an outbound call`),
    'clock-skew': hides('which action a gate followed is read from timestamps that contradict the span tree'),
  },
};
