import { captureGaps, type CaptureGap } from '../../assemble/capture-gaps.ts';
import type { Trajectory } from '../../assemble/trajectory.ts';
import type { CheckResults } from '../../checks/check-result.ts';
import type { ChecksConfig } from '../../checks/config.ts';
import { compiledRules, toolClassMatch } from '../../checks/rules.ts';
import type { ToolRoles } from '../../checks/tool-roles.ts';
import { PATTERN_LAYER } from './layer-sites.ts';
import type { Criterion } from './criterion.ts';

/**
 * The criteria a complete capture's gaps raise: what the inline checks could not answer is not
 * answered by an L1 pass either. Pure.
 * - every silenced check (`checks.silenced`): the layer that settles its pattern;
 * - tool repetition left `unavailable`: L3, which reads the tool calls;
 * - a capture gap that touches a send (a gap on an outbound step, or a requested call of an
 *   outbound tool that never became a tool span): L4, the layer that reads sends, even where no
 *   check was silenced by it. A gap that silences no check and touches no send hides nothing a
 *   claim rests on, and raises nothing (the silenced checks above carry the rest).
 * An incomplete capture is covered by `capture-complete` already (checks claim nothing there).
 */
export function captureCriteria(t: Trajectory, checks: CheckResults, roles: ToolRoles, cfg: ChecksConfig): Criterion[] {
  if (!t.complete) return [];
  const out: Criterion[] = [];
  for (const s of checks.silenced) {
    out.push({ id: `silenced:${s.pattern}`, answerable: false, reason: `silenced-check:${s.pattern}:${s.reason}`, needs: PATTERN_LAYER[s.pattern] });
  }
  const r = checks.repetition;
  if (r.status === 'unavailable') {
    out.push({
      id: 'unavailable:tool-repetition',
      answerable: false,
      reason: `unavailable-check:tool-repetition:${[...r.reasons].sort().join(',')}`,
      needs: 'L3',
    });
  }
  for (const gap of captureGaps(t.steps)) {
    if (!touchesSend(t, gap, roles, cfg)) continue;
    out.push({ id: `capture-gap:${gap.reason}`, answerable: false, reason: `capture-gap:${gap.reason}@${gap.spanIds.join(',')}`, needs: 'L4' });
  }
  return out;
}

function touchesSend(t: Trajectory, gap: CaptureGap, roles: ToolRoles, cfg: ChecksConfig): boolean {
  const sends = new Set(roles.outbound.map((i) => t.steps[i]!.id));
  if (gap.spanIds.some((id) => sends.has(id))) return true;
  const outbound = compiledRules(cfg).outbound;
  return (gap.toolNames ?? []).some((name) => toolClassMatch(name, outbound) !== undefined);
}
