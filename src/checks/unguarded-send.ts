import { hasClockSkew } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { PatternHit } from './hit.ts';
import type { ChecksConfig } from './config.ts';
import { hides, UNREAD_SPAN, UNSPANNED_CALL } from './capture-table.ts';
import type { L0CheckDefinition } from './l0-check.ts';
import { ref } from './hit-text.ts';
import { gateCoverage, roleMayBeHidden, roleName, GATE_RESULT_NOT_CAPTURED, OUTBOUND_STEP, toolRoles } from './tool-roles.ts';

/**
 * `unguarded-send`: an outbound-class tool call that no successful gate-class step covers: none
 * ended before it started, or those that did were used up by earlier sends (see
 * `gateCoverage`). One hit per such call, anchored at it.
 *
 * "No gate before" is an absence claim, so it is made from complete captures only: in an
 * incomplete one the gate may simply not have been captured, and the check stays silent; so
 * it does when the capture may be missing a gate (`roleMayBeHidden`: a nameless tool step, or
 * a requested tool call with no tool step whose name is a gate's, may have been the gate), and
 * when the timestamps cannot be trusted (`clock-skew`: "before" is read from them).
 * Its manifest status follows its capture-table row (`hiddenBy`): any gap there that could
 * hide a send, a gate or a gate's failure makes "none observed" unavailable.
 */
export function unguardedSend(t: Trajectory, cfg: ChecksConfig): PatternHit<'unguarded-send'>[] {
  if (!t.complete || hasClockSkew(t.steps) || roleMayBeHidden(t, cfg, ['gates'])) return [];
  const roles = toolRoles(t, cfg);
  const coverage = gateCoverage(t, roles);
  const hits: PatternHit<'unguarded-send'>[] = [];
  roles.outbound.forEach((i, k) => {
    const c = coverage[k]!;
    if (c.covered) return;
    const send = t.steps[i]!;
    if ('usedBy' in c) {
      const earlier = t.steps[c.usedBy]!;
      const repeat = t.steps[c.endedAt]!;
      hits.push({
        pattern: 'unguarded-send',
        anchor: send.id,
        detail:
          c.endedAt === i
            ? `outbound ${roleName(send)} ran with no successful gate before it that an earlier send to the same target had not used (span ${earlier.id})`
            : `outbound ${roleName(send)} ran with no successful gate before it that was not used up (span ${repeat.id} sent again to the target of span ${earlier.id})`,
        evidence: c.endedAt === i ? [ref(send), ref(earlier)] : [ref(send), ref(repeat), ref(earlier)],
      });
      return;
    }
    const failedGates = roles.gates.filter((g) => roles.failed[g] && t.steps[g]!.endTimeUnixNano <= send.startTimeUnixNano);
    const note = failedGates.length === 0 ? '' : ` (gates before it failed: ${failedGates.map((g) => roleName(t.steps[g]!)).join(', ')})`;
    hits.push({
      pattern: 'unguarded-send',
      anchor: send.id,
      detail: `outbound ${roleName(send)} ran with no successful gate before it${note}`,
      evidence: [ref(send), ...failedGates.map((g) => ref(t.steps[g]!))],
    });
  });
  return hits;
}

export const unguardedSendCheck: L0CheckDefinition<'unguarded-send'> = {
  pattern: 'unguarded-send',
  run: unguardedSend,
  // An irreversible action with no gate is what a reviewer should see first.
  severity: 'high',
  claim: (a) => `${a} ran with no successful gate before it`,
  absence: 'always',
  silentOnIncomplete: 'not run: "no gate before the send" is a claim of absence, made from complete captures only',
  hiddenBy: {
    'tool-name-not-captured': hides('a nameless tool step may be a send, or the gate before one'),
    'tool-call-not-captured': hides(`${UNSPANNED_CALL} may be a send that ran with no gate, a gate, or a gate that failed`),
    'tool-args-not-captured': hides(
      'a send whose arguments were not captured has no known target, so a second send to one target under one approval cannot be seen',
      OUTBOUND_STEP,
    ),
    'tool-result-not-captured': GATE_RESULT_NOT_CAPTURED,
    'unread-convention': hides(`${UNREAD_SPAN} may be a send or a gate`),
    'clock-skew': hides('whether a gate ended before a send started is read from timestamps that contradict the span tree'),
  },
};
