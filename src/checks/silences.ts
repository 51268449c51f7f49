import { captureGaps } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import { tableSilence } from './capture-table.ts';
import type { CheckSilence } from './check-result.ts';
import type { ChecksConfig } from './config.ts';
import type { SilenceContext } from './l0-check.ts';
import { L0_CHECKS } from './registry.ts';

/**
 * Which L0 patterns a complete capture kept from claiming absence, and why, in registry order,
 * so that a consumer (the analysis manifest, the layered walk) never reads a silenced check as
 * "none observed". For each check: the first present capture gap its capture-table row says
 * hides its subject (`hiddenBy`, `tableSilence`), else its own `silence` (input that is not a
 * capture gap). Incomplete captures are not covered here: there every absence claim is silent
 * already.
 */
export function checkSilences(t: Trajectory, cfg: ChecksConfig): CheckSilence[] {
  const gaps = captureGaps(t.steps);
  const ctx: SilenceContext = { gaps };
  const out: CheckSilence[] = [];
  for (const check of L0_CHECKS) {
    const silence = tableSilence(check.hiddenBy, gaps) ?? check.silence?.(t, cfg, ctx);
    if (silence !== undefined) out.push({ pattern: check.pattern, ...silence });
  }
  return out;
}
