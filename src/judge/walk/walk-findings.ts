import type { Trajectory } from '../../assemble/trajectory.ts';
import { spanRef, type EvidenceRef } from '../../core/evidence-ref.ts';
import { isoFromUnixNano } from '../../core/time.ts';
import type { FindingDraft } from '../../findings/make-finding.ts';
import type { Provenance } from '../../findings/provenance/provenance.ts';
import type { Finding, RecordObservationSchema } from '../../findings/schema.ts';
import { UNRESOLVED_EVENT_ID } from '../../windows/window.ts';
import { build, SEVERITY, windowEvidence } from '../judged-findings.ts';
import type { ResultRecord } from '../ledger/record.ts';
import type { LayerConflict } from './conflicts.ts';
import type { SiteOutcome, WalkOutcome } from './walk.ts';
import { WALK_VERSION } from './walk.ts';

/** The analyst of every walk finding: its own, so no trace-question finding id changes. */
export const WALK_ANALYST_ID = 'layered-walk';

/** A JSON value as a record observation holds it. */
type Json = import('zod').infer<typeof RecordObservationSchema>['values'][string];

export interface WalkFindings {
  findings: Finding[];
  /** Layer answers whose recommendation, after the verifier, is `act`. Never a summary or a conflict. */
  alarms: Finding[];
}

function lastEnd(t: Trajectory): string {
  let end = t.steps[0]!.endTimeUnixNano;
  for (const s of t.steps) if (s.endTimeUnixNano > end) end = s.endTimeUnixNano;
  return isoFromUnixNano(end);
}

function subjectOf(t: Trajectory): FindingDraft['subject'] {
  return { trajectory_key: t.key, trace_ids: t.traceIds, revision: t.revision };
}

function covariates(t: Trajectory, observedAt: string): FindingDraft['covariates'] {
  return {
    observed_at: observedAt,
    capture_complete: t.complete,
    ...(t.incompleteReasons.length > 0 ? { incomplete_reasons: [...t.incompleteReasons].sort() } : {}),
  };
}

/** First emission: the call's receipt; a replay paid nothing new (null; the original is under `replay`). */
function paid(result: ResultRecord, replay: boolean): { receipt: ResultRecord['receipt'] | null } {
  return { receipt: replay ? null : result.receipt };
}

function replayOf(result: ResultRecord, replay: boolean): Pick<FindingDraft, 'replay'> {
  return replay ? { replay: { new_physical_calls: 0, original_receipt: result.receipt, original_recorded_at: result.recordedAt } } : {};
}

/**
 * The walk's findings: one per judged site (the layer's routing answer, its verification and
 * its final recommendation), one summary (`layer_verdicts`, `layers_engaged`, `early_exit`,
 * `emissions`) and one per conflict, addressed to a human. Built from the recorded results
 * alone, so a replayed walk gives the same findings.
 */
export function walkFindings(t: Trajectory, outcome: WalkOutcome, provenance: Provenance): WalkFindings {
  const findings: Finding[] = [];
  const alarms: Finding[] = [];
  for (const s of outcome.sites) {
    const f = siteFinding(t, s, provenance);
    findings.push(f);
    if (s.recommendation.action === 'act') alarms.push(f);
  }
  const observedAt = lastEnd(t);
  const refs: EvidenceRef[] = [];
  for (const s of outcome.sites) {
    const [traceId, spanId] = s.window.anchor.split('/') as [string, string];
    if (!refs.some((r) => r.uri === spanRef(traceId, spanId).uri)) refs.push(spanRef(traceId, spanId));
  }
  const said = outcome.verdicts.map((v) => `${v.layer} ${v.verdict}`).join(', ');
  findings.push(
    build(
      {
        analyst_id: WALK_ANALYST_ID,
        area: 'walk.summary',
        subject: subjectOf(t),
        claim: `Layered walk: ${said}; ${outcome.earlyExit === 'L1' ? 'stopped after L1' : 'no early exit'}`,
        id_basis: [`walk@${WALK_VERSION}`],
        severity: 'info',
        layer: 'run',
        method: { kind: 'judged', name: WALK_ANALYST_ID, version: WALK_VERSION },
        evidence_refs: refs,
        observation: {
          kind: 'record',
          name: 'layered-walk',
          values: {
            stop: outcome.stop === null ? null : { ...outcome.stop },
            criteria: outcome.criteria.map((c) => ({
              id: c.id,
              answerable: c.answerable,
              reason: c.reason,
              ...(c.needs === undefined ? {} : { needs: c.needs }),
            })),
            conflicts: outcome.conflicts.length,
            cost: { ...walkCost(outcome) },
          },
        },
        layer_verdicts: outcome.verdicts,
        layers_engaged: outcome.engaged,
        early_exit: outcome.earlyExit,
        emissions: outcome.emissions,
        observed_at: observedAt,
        covariates: covariates(t, observedAt),
      },
      provenance,
    ),
  );
  for (const c of outcome.conflicts) findings.push(conflictFinding(t, c, observedAt, provenance));
  return { findings, alarms };
}

/** What a walk paid for: new calls and attempts, tokens as reported (null once any attempt's usage is unknown). */
export interface WalkCost {
  calls: number;
  attempts: number;
  /** Summed over every new attempt; null when some attempt's usage was not reported (unknown is not 0). */
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** New attempts whose usage the provider did not report. */
  unknown_usage_attempts: number;
}

/** New judge calls and tokens this walk paid for (replays and unanswerable keys paid nothing). */
export function walkCost(outcome: WalkOutcome): WalkCost {
  const cost: WalkCost = { calls: 0, attempts: 0, prompt_tokens: 0, completion_tokens: 0, unknown_usage_attempts: 0 };
  const plus = (total: number | null, n: number | null): number | null => (total === null || n === null ? null : total + n);
  const add = (r: ResultRecord, replay: boolean) => {
    if (replay || r.receipt.attempts === 0) return;
    cost.calls++;
    cost.attempts += r.receipt.attempts;
    const attempts = r.receipt.perAttempt;
    if (attempts === undefined) {
      // A record written before attempts were itemised carries only its sums (null when unknown).
      cost.prompt_tokens = plus(cost.prompt_tokens, r.receipt.promptTokens);
      cost.completion_tokens = plus(cost.completion_tokens, r.receipt.completionTokens);
      if (r.receipt.totalTokens === null) cost.unknown_usage_attempts += r.receipt.attempts;
      return;
    }
    for (const a of attempts) {
      cost.prompt_tokens = plus(cost.prompt_tokens, a.promptTokens);
      cost.completion_tokens = plus(cost.completion_tokens, a.completionTokens);
      if (a.totalTokens === null) cost.unknown_usage_attempts++;
    }
  };
  for (const s of outcome.sites) {
    add(s.result, s.replay);
    if (s.verifier?.kind === 'answered') add(s.verifier.result, s.verifier.replay);
  }
  return cost;
}

function siteFinding(t: Trajectory, s: SiteOutcome, provenance: Provenance): Finding {
  const w = s.window;
  const a = s.result.answers[0]!;
  const selected = a.support !== null && a.support !== UNRESOLVED_EVENT_ID ? a.support : null;
  // The selected event is recorded under `support`; the evidence stays the window's (`windowEvidence`).
  const refs = selected === null ? [] : w.events.filter((e) => e.id === selected).flatMap((e) => e.evidenceRefs);
  const v = s.verifier;
  const verification: Json =
    v === undefined
      ? null
      : v.kind === 'not-judged'
        ? { fate: v.fate, reason: v.reason }
        : {
            fate: 'judged',
            answer: v.result.answers[0]?.option ?? null,
            recommendation: v.result.answers[0] === undefined ? null : { ...v.result.answers[0].recommendation },
            certificate_id: v.result.answers[0]?.certificateId ?? null,
            requested_model: v.result.requestedModel,
            served_model: v.result.servedModel,
            failure: v.result.failure,
            ledger_key: v.result.key,
            ...paid(v.result, v.replay),
          };
  const gap = s.result.answers[1];
  const claim =
    a.option === null
      ? `No valid judge answer to ${a.questionId}@${a.questionVersion} on the ${w.kind} window at span ${w.anchor}; escalated`
      : `Judge answered "${a.option}" to ${a.questionId}@${a.questionVersion} on the ${w.kind} window at span ${w.anchor}`;
  return build(
    {
      analyst_id: WALK_ANALYST_ID,
      area: a.questionId,
      subject: {
        ...subjectOf(t),
        ...(w.subject.service === undefined ? {} : { service: w.subject.service }),
        ...(w.subject.agent === undefined ? {} : { agent: w.subject.agent }),
      },
      claim,
      id_basis: [`window:${w.kind}@span:${w.anchor}`, `window-policy:${w.policyDigest}`, `question:${a.questionId}@${a.questionVersion}`],
      severity: SEVERITY[s.recommendation.action],
      layer: w.kind,
      method: { kind: 'judged', name: `${WALK_ANALYST_ID}.${a.questionId}`, version: a.questionVersion },
      evidence_refs: windowEvidence(w),
      observation: {
        kind: 'record',
        name: 'layer-question',
        values: {
          walk_layer: s.layer,
          question_id: a.questionId,
          question_version: a.questionVersion,
          answer: a.option,
          probabilities: a.probabilities,
          support: { selected: a.support, event_uris: refs.map((r) => r.uri) },
          ...(gap === undefined ? {} : { gap_answer: gap.option }),
          recommendation: { ...s.recommendation },
          primary_recommendation: { ...a.recommendation },
          certificate_id: a.certificateId,
          verification,
          window_id: w.id,
          window_kind: w.kind,
          window_limitations: w.limitations,
          requested_model: s.result.requestedModel,
          served_model: s.result.servedModel,
          failure: s.result.failure,
          ledger_key: s.result.key,
          ...paid(s.result, s.replay),
        },
      },
      ...replayOf(s.result, s.replay),
      observed_at: w.endedAt,
      covariates: covariates(t, w.endedAt),
    },
    provenance,
  );
}

function conflictFinding(t: Trajectory, c: LayerConflict, observedAt: string, provenance: Provenance): Finding {
  const [a, b] = c.layers;
  return build(
    {
      analyst_id: WALK_ANALYST_ID,
      area: 'walk.conflict',
      subject: subjectOf(t),
      claim: `Layers ${a} (${c.verdicts[0]}) and ${b} (${c.verdicts[1]}) disagree${c.anchor === undefined ? '' : ` at span ${c.anchor}`}; surfaced for a human, not reconciled`,
      id_basis: [`conflict:${c.kind}:${a}-${b}`, ...(c.anchor === undefined ? [] : [`span:${c.anchor}`])],
      severity: 'medium',
      layer: 'run',
      method: { kind: 'computed', name: `${WALK_ANALYST_ID}.conflict`, version: WALK_VERSION },
      evidence_refs: c.anchor === undefined ? [] : [spanRef(...(c.anchor.split('/') as [string, string]))],
      observation: {
        kind: 'record',
        name: 'layer-conflict',
        values: {
          kind: c.kind,
          layers: [...c.layers],
          verdicts: [...c.verdicts],
          detail: c.detail,
          audience: 'human',
          // A human decides; nothing routes and nothing is reconciled here.
          recommendation: { action: 'escalate', route: null, reason: 'layer-conflict' },
        },
      },
      observed_at: observedAt,
      covariates: covariates(t, observedAt),
    },
    provenance,
  );
}
