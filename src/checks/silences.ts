import { captureGaps, hiddenToolCalls } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { L0Pattern } from './check-result.ts';
import type { ChecksConfig } from './config.ts';
import { roleMayBeHidden } from './tool-roles.ts';

/** An L0 pattern that, on a complete capture, did not look at everything it reads. */
export interface CheckSilence {
  pattern: L0Pattern;
  /** A capture-gap reason (`tool-call-not-captured`, `tool-name-not-captured`, ...). */
  reason: string;
  detail: string;
}

/**
 * Which L0 patterns a complete capture's gaps kept from claiming absence, and why: the same
 * conditions the checks themselves apply (`roleMayBeHidden`, `hiddenToolCalls`), stated once so
 * that a consumer (the analysis manifest) never reads a silenced check as "none observed".
 * Incomplete captures are not covered here: there every absence claim is silent already.
 */
export function checkSilences(t: Trajectory, cfg: ChecksConfig): CheckSilence[] {
  const gaps = captureGaps(t.steps);
  if (gaps.length === 0) return [];
  const hidden = hiddenToolCalls(t.steps);
  const reasonOf = (wanted: readonly string[]) => gaps.find((g) => wanted.includes(g.reason))?.reason ?? gaps[0]!.reason;
  const hiding = ['tool-name-not-captured', 'tool-call-not-captured'];
  const out: CheckSilence[] = [];
  if (hidden.unnamed || hidden.names.size > 0) {
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
