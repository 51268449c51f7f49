import { textOf } from '../ingest/long-text.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckResults } from '../checks/check-result.ts';
import { canonicalDigest } from '../core/digest.ts';
import { spanRef } from '../core/evidence-ref.ts';
import { isoFromUnixNano } from '../core/time.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import type { Step } from '../normalize/step.ts';
import { smallerKinds, type WindowPolicy } from './policy.ts';
import { redactSecrets } from '../core/redact.ts';
import { sampledByRate, type Sampling } from './sampling.ts';
import type { TraceWindow, WindowEvent, WindowKind, WindowRefusal, WindowTrigger } from './window.ts';
import { gapLimitations, windowGaps } from './window-gaps.ts';

/** A window asked for: its kind, the index of its anchor step in `t.steps`, and why. */
export interface WindowRequest {
  kind: WindowKind;
  anchorIndex: number;
  triggers: WindowTrigger[];
}

const TRIGGER_RANK: Record<WindowTrigger, number> = { 'l0-hit': 0, outbound: 1, terminal: 2, sampled: 3 };

/**
 * The windows a trajectory asks for, in priority order (L0 hits, outbound actions, the terminal
 * step, then the rate sample), one per (kind, anchor) with every trigger that asked for it.
 * Pure: `outboundIndexes` are the outbound steps' indexes (see `toolRoles`).
 */
export function windowRequests(
  t: Trajectory,
  checks: CheckResults,
  outboundIndexes: readonly number[],
  sampling: Sampling,
  policyDigest: string,
): WindowRequest[] {
  const byKey = new Map<string, WindowRequest>();
  const ask = (kind: WindowKind, anchorIndex: number, trigger: WindowTrigger): void => {
    if (anchorIndex < 0 || anchorIndex >= t.steps.length) return;
    const key = `${kind}:${anchorIndex}`;
    const existing = byKey.get(key);
    if (existing === undefined) byKey.set(key, { kind, anchorIndex, triggers: [trigger] });
    else if (!existing.triggers.includes(trigger)) existing.triggers.push(trigger);
  };
  if (sampling.triggers.l0Hit) {
    for (const hit of checks.l0) {
      const at = hit.evidence.find((e) => e.spanId === hit.anchor);
      ask(
        'event',
        t.steps.findIndex((s) => s.id === hit.anchor && (at === undefined || s.traceId === at.traceId)),
        'l0-hit',
      );
    }
  }
  if (sampling.triggers.outbound) for (const i of outboundIndexes) ask('event', i, 'outbound');
  const terminal = terminalIndex(t);
  if (sampling.triggers.terminal && terminal >= 0) ask('turn', terminal, 'terminal');
  if (sampledByRate(t.key, policyDigest, sampling)) {
    const agent = t.steps.findIndex((s) => s.kind === 'agent');
    if (agent >= 0) ask('agent', agent, 'sampled');
    else ask('turn', terminal, 'sampled');
  }
  const rank = (r: WindowRequest) => Math.min(...r.triggers.map((x) => TRIGGER_RANK[x]));
  return [...byKey.values()].sort((a, b) => rank(a) - rank(b) || a.anchorIndex - b.anchorIndex || a.kind.localeCompare(b.kind));
}

/** The step that ended last (the last in trajectory order on ties): what the agent finished with. */
export function terminalIndex(t: Trajectory): number {
  let best = -1;
  t.steps.forEach((s, i) => {
    if (best < 0 || s.endTimeUnixNano >= t.steps[best]!.endTimeUnixNano) best = i;
  });
  return best;
}

/**
 * A window's id: digest of what it covers, so a window has the same id whether it was built,
 * refused or never asked for (the analysis manifest names every fate by it).
 */
export function windowId(trajectoryKey: string, revision: number, kind: WindowKind, anchor: string, policyDigest: string): string {
  return `w1_${canonicalDigest({ key: trajectoryKey, revision, kind, anchor, policyDigest }).slice(0, 24)}`;
}

export interface Extraction {
  windows: TraceWindow[];
  refusals: WindowRefusal[];
  /** Windows built as a smaller kind than asked for (`windowPolicy.config.fallback`): window id → why. */
  fellBack: Map<string, string>;
}

/** Why a built window cannot be sent (a request over a cap or the model's context), or null. Pure. */
export type FitCheck = (w: TraceWindow) => { reason: string; detail: string } | null;

export interface ExtractOptions {
  /** A window that does not fit is built again as the policy's next smaller kinds (`smallerKinds`). */
  fallback?: boolean;
  /** What fitting means beyond the window's own caps (the judge's request caps). */
  fits?: FitCheck;
}

/**
 * Build the requested windows under the policy. Every cap refuses the whole window with its
 * reason; nothing is truncated. Requests beyond `maxWindowsPerTrajectory` are refused in order.
 * With `fallback`, a window that does not fit (its caps, or `fits`) is built again at the same
 * anchor as each smaller kind in turn (`smallerKinds`); each kind tried and not fitting is
 * refused with its own reason, its detail saying what came of the request; the chain stops at a
 * kind the trajectory asks for at that anchor on its own.
 * Pure: the same trajectory, requests and policy give byte-identical windows.
 */
export function extractWindows(
  t: Trajectory,
  requests: readonly WindowRequest[],
  policy: WindowPolicy,
  policyDigest: string,
  options: ExtractOptions = {},
): Extraction {
  const out: Extraction = { windows: [], refusals: [], fellBack: new Map() };
  const asked = new Set(requests.map((r) => `${r.kind}:${r.anchorIndex}`));
  let accepted = 0;
  for (const req of requests) {
    const anchor = t.steps[req.anchorIndex]!;
    const refuse = (kind: WindowKind, reason: string, detail: string, windowId?: string) =>
      out.refusals.push({
        trajectoryKey: t.key,
        revision: t.revision,
        kind,
        anchor: `${anchor.traceId}/${anchor.id}`,
        triggers: req.triggers,
        reason,
        detail,
        ...(windowId === undefined ? {} : { windowId }),
      });
    if (!policy.config.kinds.includes(req.kind)) {
      refuse(req.kind, 'kind-disabled', `window kind ${req.kind} is not in the policy's kinds`);
      continue;
    }
    if (accepted >= policy.config.maxWindowsPerTrajectory) {
      refuse(req.kind, 'windows-per-trajectory', `more than ${policy.config.maxWindowsPerTrajectory} windows asked for`);
      continue;
    }
    accepted++;
    const kinds = [req.kind, ...(options.fallback === true ? smallerKinds(policy, req.kind) : [])];
    const misfits: { kind: WindowKind; reason: string; detail: string; windowId?: string }[] = [];
    let fitted: TraceWindow | undefined;
    let ownRequest: WindowKind | undefined;
    for (const kind of kinds) {
      if (kind !== req.kind && asked.has(`${kind}:${req.anchorIndex}`)) {
        ownRequest = kind;
        break;
      }
      if (kind !== req.kind) asked.add(`${kind}:${req.anchorIndex}`);
      const built = buildWindow(t, { ...req, kind }, policy, policyDigest);
      const unfit = 'reason' in built ? built : (options.fits?.(built) ?? null);
      if (unfit === null && !('reason' in built)) {
        fitted = built;
        break;
      }
      misfits.push({ kind, reason: unfit!.reason, detail: unfit!.detail, ...('reason' in built ? {} : { windowId: built.id }) });
    }
    const outcome =
      fitted !== undefined
        ? `; judged as the ${fitted.kind} window at this anchor instead`
        : ownRequest !== undefined
          ? `; the ${ownRequest} window at this anchor is asked for on its own`
          : kinds.length > 1
            ? `; no kind of windowPolicy.config.fallback fits (tried ${kinds.join(', ')})`
            : '';
    for (const m of misfits) refuse(m.kind, m.reason, `${m.detail}${outcome}`, m.windowId);
    if (fitted === undefined) continue;
    out.windows.push(fitted);
    const first = misfits[0];
    if (first !== undefined) out.fellBack.set(fitted.id, `judged as ${fitted.kind}: the ${req.kind} window did not fit (${first.reason}: ${first.detail})`);
  }
  return out;
}

function buildWindow(t: Trajectory, req: WindowRequest, policy: WindowPolicy, policyDigest: string): TraceWindow | { reason: string; detail: string } {
  const limitations: string[] = [];
  if (!t.complete) limitations.push(`incomplete-trajectory:${[...t.incompleteReasons].sort().join(',')}`);
  const selected = selectSteps(t, req, policy, limitations);
  if ('reason' in selected) return selected;
  const indexes = selected;
  const max = policy.config.maxEventsPerWindow;
  if (indexes.length > max) {
    return { reason: 'events-per-window', detail: `${indexes.length} events, cap ${max}` };
  }
  const anchor = t.steps[req.anchorIndex]!;
  let redactions = 0;
  const events: WindowEvent[] = indexes.map((i, n) => {
    const step = t.steps[i]!;
    const id = `e${n + 1}`;
    if (!hasContent(step)) limitations.push(`content-not-captured:${id}`);
    const r = redactSecrets(canonicalJson(eventContent(step)));
    redactions += r.count;
    return { id, content: r.text, evidenceRefs: [spanRef(step.traceId, step.id)] };
  });
  const steps = indexes.map((i) => t.steps[i]!);
  let start = steps[0]!.startTimeUnixNano;
  let end = steps[0]!.endTimeUnixNano;
  for (const s of steps) {
    if (s.startTimeUnixNano < start) start = s.startTimeUnixNano;
    if (s.endTimeUnixNano > end) end = s.endTimeUnixNano;
  }
  // The capture gaps that touch what the window could have held, a requested call missing
  // before it included: the judge is told of each.
  const held = new Set(steps);
  const eventOf = new Map<string, string>();
  steps.forEach((s, n) => eventOf.has(s.id) || eventOf.set(s.id, `e${n + 1}`));
  limitations.push(
    ...gapLimitations(
      windowGaps(t, (s) => held.has(s), end),
      (id) => eventOf.get(id),
    ),
  );
  const agent = anchor.agentName ?? enclosingAgent(t, req.anchorIndex)?.agentName;
  const anchorId = `${anchor.traceId}/${anchor.id}`;
  const window: TraceWindow = {
    id: windowId(t.key, t.revision, req.kind, anchorId, policyDigest),
    kind: req.kind,
    triggers: [...req.triggers],
    anchor: anchorId,
    traceIds: [...new Set(steps.map((s) => s.traceId))].sort(),
    subject: {
      trajectoryKey: t.key,
      revision: t.revision,
      ...(agent === undefined ? {} : { agent }),
      ...(anchor.service === undefined ? {} : { service: anchor.service }),
    },
    startedAt: isoFromUnixNano(start),
    endedAt: isoFromUnixNano(end),
    limitations,
    events,
    redactions,
    policyDigest,
  };
  const bytes = Buffer.byteLength(canonicalJson(window));
  if (bytes > policy.config.maxBytesPerWindow) {
    return { reason: 'bytes-per-window', detail: `${bytes} bytes, cap ${policy.config.maxBytesPerWindow}` };
  }
  return window;
}

/** Indexes of the steps a window covers, in trajectory order. */
function selectSteps(t: Trajectory, req: WindowRequest, policy: WindowPolicy, limitations: string[]): number[] | { reason: string; detail: string } {
  const i = req.anchorIndex;
  const anchor = t.steps[i]!;
  switch (req.kind) {
    case 'event': {
      const c = policy.config.eventContextSteps;
      const from = Math.max(0, i - c);
      const to = Math.min(t.steps.length - 1, i + c);
      return range(from, to);
    }
    case 'turn': {
      // A turn is the anchor's trace (session trajectories carry one trace per user turn), cut
      // further at captured user-message steps when there are any.
      const sameTrace = t.steps.flatMap((s, j) => (s.traceId === anchor.traceId ? [j] : []));
      const pos = sameTrace.indexOf(i);
      let from = 0;
      for (let k = pos; k >= 0; k--)
        if (t.steps[sameTrace[k]!]!.kind === 'message') {
          from = k;
          break;
        }
      let to = sameTrace.length - 1;
      for (let k = pos + 1; k < sameTrace.length; k++)
        if (t.steps[sameTrace[k]!]!.kind === 'message') {
          to = k - 1;
          break;
        }
      if (t.traceIds.length <= 1 && !sameTrace.some((j) => t.steps[j]!.kind === 'message')) {
        limitations.push('turn-boundaries-not-captured');
      }
      return sameTrace.slice(from, to + 1);
    }
    case 'agent': {
      const agent = enclosingAgent(t, i);
      if (agent === undefined) return { reason: 'no-agent-step', detail: 'no agent step encloses the anchor' };
      const inside = descendantsOf(t, agent);
      return t.steps.flatMap((s, j) => (inside.has(s) ? [j] : []));
    }
  }
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let k = from; k <= to; k++) out.push(k);
  return out;
}

/** The anchor itself when it is an agent step, else its nearest agent ancestor. */
function enclosingAgent(t: Trajectory, index: number): Step | undefined {
  const byId = new Map(t.steps.map((s) => [`${s.traceId}/${s.id}`, s]));
  let s: Step | undefined = t.steps[index];
  const seen = new Set<string>();
  while (s !== undefined && !seen.has(s.id)) {
    if (s.kind === 'agent') return s;
    seen.add(s.id);
    s = s.parentId === undefined ? undefined : byId.get(`${s.traceId}/${s.parentId}`);
  }
  return undefined;
}

/** The agent step and every step under it in the same trace. */
function descendantsOf(t: Trajectory, agent: Step): Set<Step> {
  const children = new Map<string, Step[]>();
  for (const s of t.steps) {
    if (s.traceId !== agent.traceId || s.parentId === undefined) continue;
    const list = children.get(s.parentId) ?? [];
    list.push(s);
    children.set(s.parentId, list);
  }
  const inside = new Set<Step>([agent]);
  const stack = [agent];
  while (stack.length > 0) {
    for (const c of children.get(stack.pop()!.id) ?? []) {
      if (inside.has(c)) continue;
      inside.add(c);
      stack.push(c);
    }
  }
  return inside;
}

function hasContent(step: Step): boolean {
  return step.args !== undefined || step.result !== undefined || step.input !== undefined || step.error !== undefined;
}

/** What the judge is shown of one step: only captured fields; absent stays absent. */
function eventContent(step: Step): Record<string, unknown> {
  const status = step.statusCode === 2 ? 'error' : step.statusCode === 1 ? 'ok' : 'unset';
  return {
    step: step.kind,
    name: step.name,
    status,
    ...(step.toolName === undefined ? {} : { tool: step.toolName }),
    ...(step.agentName === undefined ? {} : { agent: step.agentName }),
    ...(step.model === undefined ? {} : { model: step.model }),
    ...(step.input === undefined ? {} : { input: textOf(step.input) }),
    ...(step.args === undefined ? {} : { args: 'parsed' in step.args ? step.args.parsed : step.args.raw }),
    ...(step.result === undefined ? {} : { result: textOf(step.result) }),
    ...(step.error === undefined ? {} : { error: step.error }),
  };
}
