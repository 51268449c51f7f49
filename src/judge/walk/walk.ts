import type { Trajectory } from '../../assemble/trajectory.ts';
import type { CheckResults } from '../../checks/check-result.ts';
import type { ChecksConfig } from '../../checks/config.ts';
import { roleMayBeHidden, type ToolRoles } from '../../checks/tool-roles.ts';
import type { Emissions, LayerVerdict, WalkLayer } from '../../findings/schema.ts';
import type { TraceWindow } from '../../windows/window.ts';
import type { Recommendation } from '../decision-policy.ts';
import type { ResultRecord } from '../ledger/record.ts';
import { windowId } from '../../windows/extract.ts';
import { layerConflicts, type LayerConflict } from './conflicts.ts';
import { LAYER_BATTERIES } from './layer-questions.ts';
import { layerSites, type LayerSite } from './layer-sites.ts';
import { criteriaAfterL1, stopAfterL1, type Criterion, type StopDecision } from './stopping-rules.ts';
import { needsVerification, verifiedRecommendation, type VerifierReading } from './verifier.ts';

/** The walk's version: part of its summary finding's identity. */
export const WALK_VERSION = '1';

export type JudgedLayer = Exclude<WalkLayer, 'L0'>;
type WindowRead = NonNullable<LayerVerdict['windows']>[number];

/** What asking a layer at one site came to: the windows tried, and the judged one's result. */
export interface PrimaryReading {
  reads: WindowRead[];
  judged?: { window: TraceWindow; result: ResultRecord; replay: boolean };
  /** Why nothing was judged, when nothing was. */
  notJudged?: { fate: 'refused' | 'deferred'; reason: string };
}

/** The I/O the walk needs: ask a layer's judge at a site; ask the verifier on a judged window. */
export interface LayerReader {
  primary(layer: JudgedLayer, site: LayerSite): Promise<PrimaryReading>;
  verify(layer: JudgedLayer, window: TraceWindow): Promise<VerifierReading>;
}

/** One judged site: the primary's result, the verifier's reading when asked, and the final recommendation. */
export interface SiteOutcome {
  layer: JudgedLayer;
  window: TraceWindow;
  result: ResultRecord;
  replay: boolean;
  verifier?: VerifierReading;
  /** The routing answer's recommendation after the verifier (downgrade-only). */
  recommendation: Recommendation;
}

export interface WalkOutcome {
  /** One per layer, L0 to L4, skipped ones marked. */
  verdicts: LayerVerdict[];
  engaged: WalkLayer[];
  earlyExit: 'L1' | null;
  stop: StopDecision | null;
  criteria: Criterion[];
  sites: SiteOutcome[];
  conflicts: LayerConflict[];
  emissions: Emissions;
}

export interface WalkInput {
  t: Trajectory;
  checks: CheckResults;
  roles: ToolRoles;
  /** The inline checks' configuration: which requested tool a capture gap hid is a send. */
  checksCfg: ChecksConfig;
  stopEarly: boolean;
  maxWindowsPerLayer: number;
  /** The extraction policy's digest: names the windows a layer did not read. */
  policyDigest: string;
}

const anchorOf = (t: Trajectory, i: number) => `${t.steps[i]!.traceId}/${t.steps[i]!.id}`;

/**
 * The layered walk over one trajectory: L0 (the inline candidates), then L1; after L1 the
 * stopping rule decides (`stopAfterL1`); descending, L2, L3 and L4 in that order, each over its
 * sites (`layerSites`). Every answer that would act is verified, downgrade-only. Conflicts are
 * listed, never reconciled. Deterministic given the reader's answers: all I/O is the reader's.
 */
export async function walk(input: WalkInput, reader: LayerReader): Promise<WalkOutcome> {
  const { t, checks, roles } = input;
  const verdicts: LayerVerdict[] = [l0Verdict(t, checks)];
  const engaged: WalkLayer[] = ['L0'];
  const sites: SiteOutcome[] = [];
  const missing: Emissions['missing'] = [];

  const run = async (layer: JudgedLayer): Promise<LayerVerdict> => {
    engaged.push(layer);
    const plan = layerSites(layer, t, checks, roles, input.maxWindowsPerLayer);
    if (plan.sites.length === 0) {
      // No send to read, yet the capture may hide one: that is not "no sends".
      if (layer === 'L4' && roleMayBeHidden(t, input.checksCfg, ['outbound'])) return { layer, verdict: 'undecidable', reason: 'sends-may-be-hidden' };
      return { layer, verdict: 'not-applicable', reason: plan.none ?? 'nothing-to-read' };
    }
    const readings = await Promise.all(plan.sites.map((site) => readSite(layer, site, reader)));
    const windows: WindowRead[] = readings.flatMap((r) => r.primary.reads);
    for (const s of plan.notRead) {
      const anchor = anchorOf(t, s.anchorIndex);
      windows.push({
        window_id: windowId(t.key, t.revision, s.kinds[0]!, anchor, input.policyDigest),
        kind: s.kinds[0]!,
        anchor,
        fate: 'not-read',
        reason: 'windows-per-layer',
      });
      missing.push({ key: `${layer}@${anchorOf(t, s.anchorIndex)}`, reason: `not-read:windows-per-layer (${input.maxWindowsPerLayer})` });
    }
    const verdict = foldLayer(layer, t, plan.sites, readings, plan.notRead);
    for (const [i, r] of readings.entries()) {
      const key = `${layer}@${anchorOf(t, plan.sites[i]!.anchorIndex)}`;
      if (r.outcome !== undefined) sites.push(r.outcome);
      if (r.outcome === undefined) missing.push({ key, reason: `${r.primary.notJudged?.fate ?? 'refused'}:${r.primary.notJudged?.reason ?? 'unknown'}` });
      else if (r.outcome.result.failure !== null) missing.push({ key, reason: `failure:${r.outcome.result.failure.kind}` });
    }
    return { ...verdict, question: `${LAYER_BATTERIES[layer][0]!.id}@${LAYER_BATTERIES[layer][0]!.version}`, windows };
  };

  const l1 = await run('L1');
  verdicts.push(l1);
  const criteria = criteriaAfterL1(t, checks, roles, input.checksCfg);
  const stop = stopAfterL1(l1, criteria, input.stopEarly);
  let earlyExit: 'L1' | null = null;
  if (stop.stop) {
    earlyExit = 'L1';
    for (const layer of ['L2', 'L3', 'L4'] as const) verdicts.push({ layer, verdict: 'skipped', reason: stop.reason });
  } else {
    for (const layer of ['L2', 'L3', 'L4'] as const) verdicts.push(await run(layer));
  }
  const judged = sites.map((s) => ({ layer: s.layer, window: s.window, option: s.result.answers[0]?.option ?? null }));
  const conflicts = layerConflicts(checks, verdicts, judged);
  // The self-manifest: every answer gathered, and every window the walk needed and did not get.
  const emitted = [
    'layer_verdicts',
    'layers_engaged',
    'early_exit',
    ...sites.filter((s) => s.result.failure === null).map((s) => `${s.layer}@${s.window.anchor}`),
  ];
  return { verdicts, engaged, earlyExit, stop, criteria, sites, conflicts, emissions: { emitted, missing } };
}

interface Reading {
  primary: PrimaryReading;
  outcome?: SiteOutcome;
}

async function readSite(layer: JudgedLayer, site: LayerSite, reader: LayerReader): Promise<Reading> {
  const primary = await reader.primary(layer, site);
  if (primary.judged === undefined) return { primary };
  const { window, result, replay } = primary.judged;
  const first = result.answers[0]!.recommendation;
  const verifier = needsVerification(first) ? await reader.verify(layer, window) : undefined;
  return {
    primary,
    outcome: { layer, window, result, replay, ...(verifier === undefined ? {} : { verifier }), recommendation: verifiedRecommendation(first, verifier) },
  };
}

/** L0 is the inline checks: fired candidates, never a pass or fail; silence claims nothing on an incomplete capture. */
function l0Verdict(t: Trajectory, checks: CheckResults): LayerVerdict {
  if (checks.l0.length > 0) return { layer: 'L0', verdict: 'fired', reason: `fired:${[...new Set(checks.l0.map((h) => h.pattern))].join(',')}` };
  if (!t.complete) return { layer: 'L0', verdict: 'undecidable', reason: `incomplete-capture:${[...t.incompleteReasons].sort().join(',')}` };
  return { layer: 'L0', verdict: 'not-fired', reason: 'no-pattern-fired' };
}

/**
 * A layer's verdict from its sites: `fail` when any judged window answered yes; `pass` only
 * when every site was judged `no` and none was left unread; otherwise `undecidable` with the
 * first reason. L3 names the earliest failed output as the problem's origin, but only when no
 * earlier candidate went unread or undecided (else `unknown`, with that candidate); L4 the gap
 * kind of its first failure.
 */
function foldLayer(
  layer: JudgedLayer,
  t: Trajectory,
  siteList: readonly LayerSite[],
  readings: readonly Reading[],
  notRead: readonly LayerSite[],
): LayerVerdict {
  const per = readings.map((r, i) => ({ r, site: siteList[i]! }));
  const failed = per.filter(({ r }) => r.outcome?.result.answers[0]?.option === 'yes').sort((a, b) => a.site.anchorIndex - b.site.anchorIndex);
  if (failed.length > 0) {
    const first = failed[0]!;
    const v: LayerVerdict = { layer, verdict: 'fail', reason: `answer:yes@${anchorOf(t, first.site.anchorIndex)}` };
    if (layer === 'L3') Object.assign(v, problemOrigin(t, first.site.anchorIndex, per, notRead));
    if (layer === 'L4') {
      const gap = first.r.outcome!.result.answers[1]?.option;
      if (gap === 'yes') v.gap_kind = 'retrieval';
      else if (gap === 'no') v.gap_kind = 'attention';
    }
    return v;
  }
  for (const { r } of per) {
    const undecided = undecidedReason(r);
    if (undecided !== undefined) return { layer, verdict: 'undecidable', reason: undecided };
  }
  if (notRead.length > 0) return { layer, verdict: 'undecidable', reason: `not-read:${notRead.length}` };
  return { layer, verdict: 'pass', reason: 'answer:no' };
}

/** Why a site's reading decided nothing (not judged, failed, or an answer other than no or yes); undefined when it answered no. */
function undecidedReason(r: Reading): string | undefined {
  if (r.outcome === undefined) return `${r.primary.notJudged?.fate ?? 'refused'}:${r.primary.notJudged?.reason ?? 'unknown'}`;
  const res = r.outcome.result;
  if (res.failure !== null) return `failure:${res.failure.kind}`;
  const option = res.answers[0]?.option ?? null;
  return option === 'no' ? undefined : `answer:${option ?? 'none'}`;
}

/**
 * Where the L3 problem began: the earliest failed output at `failedAt`, unless a candidate
 * before it was not read (the windows-per-layer cap) or read without a decision — the problem
 * may have begun there, so the origin is `unknown` and names the earliest such candidate.
 */
function problemOrigin(
  t: Trajectory,
  failedAt: number,
  per: readonly { r: Reading; site: LayerSite }[],
  notRead: readonly LayerSite[],
): Pick<LayerVerdict, 'first_problem_origin' | 'first_problem_origin_reason'> {
  const open: { at: number; reason: string }[] = [
    ...notRead.filter((s) => s.anchorIndex < failedAt).map((s) => ({ at: s.anchorIndex, reason: `earlier-candidate-not-read@${anchorOf(t, s.anchorIndex)}` })),
    ...per.flatMap(({ r, site }) => {
      const undecided = site.anchorIndex < failedAt ? undecidedReason(r) : undefined;
      return undecided === undefined ? [] : [{ at: site.anchorIndex, reason: `earlier-candidate-undecided@${anchorOf(t, site.anchorIndex)}:${undecided}` }];
    }),
  ].sort((a, b) => a.at - b.at);
  if (open.length === 0) return { first_problem_origin: anchorOf(t, failedAt) };
  return { first_problem_origin: 'unknown', first_problem_origin_reason: open[0]!.reason };
}
