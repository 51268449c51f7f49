import { captureGaps } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckSilence } from './check-result.ts';
import type { ChecksConfig } from './config.ts';
import type { SilenceContext, SilenceReason } from './l0-check.ts';
import { L0_CHECKS } from './registry.ts';

/**
 * Which L0 patterns a complete capture's gaps kept from claiming absence, and why: each
 * check's own `silence` (the same conditions the check applies, stated beside it), in registry
 * order, so that a consumer (the analysis manifest) never reads a silenced check as "none
 * observed". Incomplete captures are not covered here: there every absence claim is silent
 * already.
 */
export function checkSilences(t: Trajectory, cfg: ChecksConfig): CheckSilence[] {
  const gaps = captureGaps(t.steps);
  const ctx: SilenceContext = {
    gaps,
    reasonOf: (wanted) => gaps.find((g) => wanted.includes(g.reason))?.reason ?? gaps[0]!.reason,
  };
  const out: CheckSilence[] = [];
  for (const check of L0_CHECKS) {
    const silence = check.silence?.(t, cfg, ctx);
    if (silence !== undefined) out.push({ pattern: check.pattern, ...silence });
  }
  return out;
}
