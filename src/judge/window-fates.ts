import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckResults } from '../checks/check-result.ts';
import { windowId, windowRequests, type WindowRequest } from '../windows/extract.ts';
import type { Sampling } from '../windows/sampling.ts';
import type { TraceWindow, WindowRefusal } from '../windows/window.ts';

type WindowSite = { kind: TraceWindow['kind']; anchor: string; triggers: TraceWindow['triggers'] };

/** The manifest's naming of a window of `t`, built or not: the same `w1_…` id either way. Pure. */
export function fateOf(t: Trajectory, policyDigest: string, w: WindowSite) {
  return {
    window_id: windowId(t.key, t.revision, w.kind, w.anchor, policyDigest),
    kind: w.kind,
    anchor: w.anchor,
    triggers: [...w.triggers],
  };
}

/** A built window that is not judged, as the ledger's refused/deferred audit line names it. Pure. */
export function refusalOf(w: TraceWindow, reason: string, detail: string): WindowRefusal {
  return { trajectoryKey: w.subject.trajectoryKey, revision: w.subject.revision, kind: w.kind, anchor: w.anchor, triggers: w.triggers, reason, detail };
}

/** Every trigger on and the whole rate: the windows the policy could ask for. */
const EVERY_TRIGGER = { l0Hit: true, outbound: true, terminal: true } as const;

/**
 * The windows the policy could ask for on `t` and did not — a trigger is off, or the rate
 * sample passed the trajectory by — each with that reason. Pure.
 */
export function notSampled(
  t: Trajectory,
  checks: CheckResults,
  outbound: readonly number[],
  sampling: Sampling,
  policyDigest: string,
  requested: readonly WindowRequest[],
): (WindowSite & { reason: string; detail: string })[] {
  const all = windowRequests(t, checks, outbound, { ...sampling, rate: 1, triggers: EVERY_TRIGGER }, policyDigest);
  if (all.length === requested.length) return [];
  const asked = new Set(requested.map((r) => `${r.kind}:${r.anchorIndex}`));
  const out = [];
  for (const r of all) {
    if (asked.has(`${r.kind}:${r.anchorIndex}`)) continue;
    const step = t.steps[r.anchorIndex]!;
    const off = r.triggers.filter((x) => x !== 'sampled');
    out.push({
      kind: r.kind,
      anchor: `${step.traceId}/${step.id}`,
      triggers: r.triggers,
      reason: off.length > 0 ? 'trigger-off' : 'rate',
      detail: off.length > 0 ? `trigger off: ${off.join(', ')}` : `rate ${sampling.rate}: not in the deterministic sample`,
    });
  }
  return out;
}
