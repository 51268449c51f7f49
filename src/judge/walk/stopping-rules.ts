import type { Trajectory } from '../../assemble/trajectory.ts';
import type { CheckResults } from '../../checks/check-result.ts';
import type { ChecksConfig } from '../../checks/config.ts';
import type { ToolRoles } from '../../checks/tool-roles.ts';
import type { LayerVerdict } from '../../findings/schema.ts';
import { captureCriteria } from './capture-criteria.ts';
import type { Criterion } from './criterion.ts';
import { PATTERN_LAYER } from './layer-sites.ts';

export type { Criterion } from './criterion.ts';

/**
 * The criteria after L1, from the trajectory, its inline checks and its tool roles. Pure.
 * - the capture is complete (an L1 pass over an incomplete capture cannot stand for the path);
 * - no check was silenced and no capture gap stands (`captureCriteria`): a check that could not
 *   claim absence is a question still open, for the layer that could read what the gap hid;
 * - every fired L0 pattern is a candidate only the layer it belongs to can confirm or contradict;
 * - a failed tool makes what follows suspect: only L3 reads tool outputs;
 * - an outbound send needs L4: whether its context was there when it was sent.
 * With none of these raised, the single criterion `nothing-raised` is answerable.
 */
export function criteriaAfterL1(t: Trajectory, checks: CheckResults, roles: ToolRoles, cfg: ChecksConfig): Criterion[] {
  const out: Criterion[] = [];
  const at = (i: number) => `${t.steps[i]!.traceId}/${t.steps[i]!.id}`;
  if (!t.complete)
    out.push({ id: 'capture-complete', answerable: false, reason: `incomplete-capture:${[...t.incompleteReasons].sort().join(',')}`, needs: 'L2' });
  for (const h of checks.l0)
    out.push({ id: `l0:${h.pattern}@${h.anchor}`, answerable: false, reason: `l0-candidate:${h.pattern}@${h.anchor}`, needs: PATTERN_LAYER[h.pattern] });
  roles.failed.forEach((failed, i) => {
    if (failed && t.steps[i]!.kind === 'tool') out.push({ id: `failed-tool@${at(i)}`, answerable: false, reason: `failed-tool@${at(i)}`, needs: 'L3' });
  });
  for (const i of roles.outbound) out.push({ id: `outbound@${at(i)}`, answerable: false, reason: `outbound-send@${at(i)}`, needs: 'L4' });
  out.push(...captureCriteria(t, checks, roles, cfg));
  if (out.length === 0) out.push({ id: 'nothing-raised', answerable: true, reason: 'no-candidate-failure-or-send' });
  return out;
}

export type StopDecision = { stop: true; reason: 'l1-passed-all-answerable' } | { stop: false; reason: string };

/**
 * The stopping rule: the walk may stop after L1 only when L1 passed and every criterion is
 * answerable; if L1 failed or was undecidable, or any criterion is unanswerable, it descends.
 * `stopEarly: false` never stops (every layer asked). Pure.
 */
export function stopAfterL1(l1: Pick<LayerVerdict, 'verdict' | 'reason'>, criteria: readonly Criterion[], stopEarly = true): StopDecision {
  if (!stopEarly) return { stop: false, reason: 'stop-early-off' };
  if (l1.verdict !== 'pass') return { stop: false, reason: `l1-${l1.verdict}:${l1.reason}` };
  const open = criteria.filter((c) => !c.answerable);
  if (open.length > 0) return { stop: false, reason: `unanswerable:${open.map((c) => c.reason).join(';')}` };
  return { stop: true, reason: 'l1-passed-all-answerable' };
}
