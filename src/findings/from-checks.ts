import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckResults, L0Hit, RepetitionGroup } from '../checks/check-result.ts';
import { l0Check } from '../checks/registry.ts';
import type { Step } from '../normalize/step.ts';
import { describeStep } from '../checks/hit-text.ts';
import { TrajwatchError } from '../errors.ts';
import { compareCodeUnits } from '../core/sort-small.ts';
import { spanRef, spanUri, type EvidenceRef } from '../core/evidence-ref.ts';
import { makePreparedFinding, prepareProvenance, type FindingDraft, type PreparedProvenance } from './make-finding.ts';
import type { Provenance } from './provenance/provenance.ts';
import type { Covariates, Finding } from './schema.ts';
import { rootStep } from './step-order.ts';
import { isoFromUnixNano } from '../core/time.ts';

/** Method versions stamped on findings; bump when a check's semantics change. */
export interface CheckMethodVersions {
  l0: string;
  repetition: string;
}

/**
 * l0 2: fault-passthrough carriers are uses, not replays, and "the run reported success" is read
 * per agent run (`agentRuns`); the (b) form is anchored at the first unretried failure.
 * repetition 2: the count is in the observation only, not in the claim.
 */
export const DEFAULT_METHOD_VERSIONS: CheckMethodVersions = { l0: '2', repetition: '2' };

const compareFindings = (a: Finding, b: Finding): number =>
  a.observed_at < b.observed_at ? -1 : a.observed_at > b.observed_at ? 1 : a.finding_id < b.finding_id ? -1 : a.finding_id > b.finding_id ? 1 : 0;

class Context {
  readonly t: Trajectory;
  readonly #bySpan = new Map<string, Step>();
  readonly covariatesBase: Covariates;

  constructor(t: Trajectory) {
    this.t = t;
    for (const s of t.steps) this.#bySpan.set(`${s.traceId}/${s.id}`, s);
    const root = rootStep(t.steps);
    this.covariatesBase = {
      started_at: root === undefined ? null : isoFromUnixNano(root.startTimeUnixNano),
      capture_complete: t.complete,
      ...(t.incompleteReasons.length > 0 ? { incomplete_reasons: [...t.incompleteReasons].sort() } : {}),
    };
  }

  step(traceId: string, spanId: string): Step | undefined {
    return this.#bySpan.get(`${traceId}/${spanId}`);
  }

  /** The latest end time among `steps`, else the trajectory's last end: from spans, never the clock. */
  observedAt(steps: readonly (Step | undefined)[]): string {
    let end: bigint | undefined;
    for (const s of steps) if (s !== undefined && (end === undefined || s.endTimeUnixNano > end)) end = s.endTimeUnixNano;
    if (end === undefined) for (const s of this.t.steps) if (end === undefined || s.endTimeUnixNano > end) end = s.endTimeUnixNano;
    return isoFromUnixNano(end ?? 0n);
  }

  /** When an L0 claim was first observable: the end of its anchor step. */
  claimedAt(hit: L0Hit): bigint {
    const point = hit.evidence.find((e) => e.spanId === hit.anchor);
    const anchor = point === undefined ? this.t.steps.find((s) => s.id === hit.anchor) : this.step(point.traceId, point.spanId);
    return anchor?.endTimeUnixNano ?? this.#lastEnd();
  }

  /** When a repetition was first observable: the end of its second attempt. */
  repeatedAt(g: RepetitionGroup): bigint {
    const second = g.attempts[1];
    const step = second === undefined ? undefined : this.step(second.traceId, second.spanId);
    return step?.endTimeUnixNano ?? this.#lastEnd();
  }

  #lastEnd(): bigint {
    let end = 0n;
    for (const s of this.t.steps) if (s.endTimeUnixNano > end) end = s.endTimeUnixNano;
    return end;
  }

  subject(step: Step | undefined): FindingDraft['subject'] {
    return {
      trajectory_key: this.t.key,
      trace_ids: this.t.traceIds,
      ...(step?.service === undefined ? {} : { service: step.service }),
      ...(step?.agentName === undefined ? {} : { agent: step.agentName }),
      revision: this.t.revision,
    };
  }
}

function uniqueRefs(points: readonly { traceId: string; spanId: string }[]): EvidenceRef[] {
  const seen = new Set<string>();
  const refs: EvidenceRef[] = [];
  for (const p of points) {
    const uri = spanUri(p.traceId, p.spanId);
    if (seen.has(uri)) continue;
    seen.add(uri);
    refs.push(spanRef(p.traceId, p.spanId));
  }
  return refs;
}

/**
 * One L0 hit's finding. The claim (its registered `claim` of the anchor step alone) is the
 * finding's identity; the hit's `detail` (carriers, counts, the later steps it names) is
 * evidence that may grow from revision to revision and rides in `code_eval_hits`. Repetition
 * is `info`: an observation, never a claim of waste; an L0 hit has its check's severity.
 */
function l0Draft(ctx: Context, hit: L0Hit, version: string): FindingDraft {
  const check = l0Check(hit.pattern);
  const anchorPoint = hit.evidence.find((e) => e.spanId === hit.anchor);
  const anchor = anchorPoint === undefined ? ctx.t.steps.find((s) => s.id === hit.anchor) : ctx.step(anchorPoint.traceId, anchorPoint.spanId);
  // An anchor missing from the trajectory is a checks bug; the bare span id still keeps hits apart.
  const anchorUri = anchor === undefined ? `anchor:${hit.anchor}` : spanUri(anchor.traceId, anchor.id);
  const observedAt = ctx.observedAt(anchor === undefined ? hit.evidence.map((e) => ctx.step(e.traceId, e.spanId)) : [anchor]);
  return {
    analyst_id: 'l0',
    area: hit.pattern,
    subject: ctx.subject(anchor),
    claim: `Candidate ${hit.pattern} (not a verdict): ${check.claim(anchor === undefined ? `span ${hit.anchor}` : describeStep(anchor))}`,
    id_basis: [anchorUri],
    severity: check.severity,
    layer: 'event',
    method: { kind: 'computed', name: `l0.${hit.pattern}`, version },
    verdict: 'fired',
    evidence_refs: uniqueRefs(hit.evidence),
    code_eval_hits: [{ pattern: hit.pattern, anchor: hit.anchor, detail: hit.detail }],
    observed_at: observedAt,
    covariates: { ...ctx.covariatesBase, observed_at: observedAt },
  };
}

function repetitionDraft(ctx: Context, g: RepetitionGroup, complete: boolean, version: string): FindingDraft {
  const steps = g.attempts.map((a) => ctx.step(a.traceId, a.spanId));
  const observedAt = ctx.observedAt(steps);
  // The count grows from revision to revision (and from an incomplete capture is a lower
  // bound): it is evidence in `observation`, not part of the claim, so one group keeps one id.
  return {
    analyst_id: 'tool-repetition',
    area: 'tool.repetition',
    subject: ctx.subject(steps[0]),
    claim: `\`${g.toolName}\` called more than once with identical arguments`,
    id_basis: [`tool:${g.toolName}`, `args:${g.argsDigest}`],
    severity: 'info',
    layer: 'run',
    method: { kind: 'computed', name: 'tool-repetition', version },
    verdict: 'observed',
    evidence_refs: uniqueRefs(g.attempts),
    observation: {
      kind: 'tool-repetition',
      tool_name: g.toolName,
      args_digest: g.argsDigest,
      count: g.count,
      attempts: g.attempts.map((a) => ({ trace_id: a.traceId, span_id: a.spanId })),
      capture_complete: complete,
    },
    observed_at: observedAt,
    covariates: { ...ctx.covariatesBase, observed_at: observedAt },
  };
}

/**
 * Hits of one pattern at one anchor are one claim: a check yields one hit per anchor, but
 * should two arrive, their details (sorted, so input order does not matter) and evidence are
 * joined rather than one winning by position.
 */
function mergedByAnchor(hits: readonly L0Hit[]): L0Hit[] {
  const byKey = new Map<string, L0Hit[]>();
  for (const hit of hits) {
    const key = `${hit.pattern}\u0000${hit.anchor}`;
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [hit]);
    else list.push(hit);
  }
  return [...byKey.values()].map((group) => {
    if (group.length === 1) return group[0]!;
    const sorted = [...group].sort((a, b) => compareCodeUnits(a.detail, b.detail));
    const details = [...new Set(sorted.map((h) => h.detail))];
    return { ...sorted[0]!, detail: details.join('; '), evidence: sorted.flatMap((h) => h.evidence) };
  });
}

/**
 * Findings for one checked trajectory: one per L0 hit (`analyst_id` `l0`, verdict `fired`),
 * one per repetition group (`analyst_id` `tool-repetition`, verdict `observed`), sorted by
 * `observed_at` then `finding_id`. Pure: the same input gives byte-identical findings.
 * `none-observed` and `unavailable` repetition results produce no finding.
 *
 * `provenance` is one provenance for every finding, or (what the pipeline passes) provenance
 * as of a moment, asked for at the moment each claim was first observable — an L0 hit's anchor
 * end, a repetition's second attempt — so later steps cannot change an earlier claim's id. It
 * should come from `deriveProvenance` / `provenanceAsOf`, which already refuse
 * conflicting ids; passing conflicting provenance is a caller bug and throws.
 */
export function findingsFromChecks(
  t: Trajectory,
  results: CheckResults,
  provenance: Provenance | ProvenanceAt,
  versions: CheckMethodVersions = DEFAULT_METHOD_VERSIONS,
): Finding[] {
  const preparedAt = preparer(provenance);
  const ctx = new Context(t);
  const drafts: [FindingDraft, bigint][] = mergedByAnchor(results.l0).map((hit) => [l0Draft(ctx, hit, versions.l0), ctx.claimedAt(hit)]);
  if (results.repetition.status === 'observed') {
    const { complete } = results.repetition;
    for (const g of results.repetition.groups) drafts.push([repetitionDraft(ctx, g, complete, versions.repetition), ctx.repeatedAt(g)]);
  }
  // Equal claims on equal evidence are one finding (a check that reported a hit twice).
  const byId = new Map<string, Finding>();
  for (const [d, at] of drafts) {
    const f = makePreparedFinding(d, preparedAt(at));
    if (!byId.has(f.finding_id)) byId.set(f.finding_id, f);
  }
  return [...byId.values()].sort(compareFindings);
}

/**
 * Provenance as of a moment (span time, ns): the treatment and conditions in effect when a
 * claim was first observed, e.g. `provenanceAsOf(t, cfg)`. A claim's
 * provenance is identity, so it must not change when later steps arrive.
 */
export type ProvenanceAt = (untilUnixNano: bigint) => Provenance;

/** Prepared provenance by moment, each distinct moment and each distinct provenance prepared once. */
function preparer(provenance: Provenance | ProvenanceAt): (at: bigint) => PreparedProvenance {
  const prepare = (p: Provenance): PreparedProvenance => {
    const prepared = prepareProvenance(p);
    if (!prepared.ok) {
      const { kind, id } = prepared.error;
      throw new TrajwatchError(`provenance refused: ${kind} on id ${id}`, { context: { ...prepared.error } });
    }
    return prepared.value;
  };
  if (typeof provenance !== 'function') {
    const once = prepare(provenance);
    return () => once;
  }
  // Many moments share one provenance (the whole trajectory's, mostly): each is prepared once.
  const byMoment = new Map<bigint, PreparedProvenance>();
  const byProvenance = new Map<Provenance, PreparedProvenance>();
  return (at) => {
    let prepared = byMoment.get(at);
    if (prepared === undefined) {
      const p = provenance(at);
      prepared = byProvenance.get(p);
      if (prepared === undefined) {
        prepared = prepare(p);
        byProvenance.set(p, prepared);
      }
      byMoment.set(at, prepared);
    }
    return prepared;
  };
}
