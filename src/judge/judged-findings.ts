import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckResults } from '../checks/check-result.ts';
import { TrajwatchError } from '../errors.ts';
import { spanRef, type EvidenceRef } from '../core/evidence-ref.ts';
import { makeFinding, type FindingDraft } from '../findings/make-finding.ts';
import type { Provenance } from '../findings/provenance/provenance.ts';
import type { Finding, Severity } from '../findings/schema.ts';
import type { TraceWindow } from '../windows/window.ts';
import { UNRESOLVED_EVENT_ID } from '../windows/window.ts';
import type { Action } from './decision-policy.ts';
import type { ResultRecord } from './ledger/record.ts';
import { REPETITION_QUESTION, questionById } from './questions.ts';
import { windowRepetition } from '../windows/window-repetition.ts';

export const JUDGE_ANALYST_ID = 'trace-questions';

/** A judged finding's severity follows its recommended action (the trace questions and the walk alike). */
export const SEVERITY: Record<Action, Severity> = { act: 'high', escalate: 'medium', record: 'info' };

/** Judged findings and the alarms among them: the `act` answers of a window whose combined action is `act`. */
export interface WindowFindings {
  findings: Finding[];
  alarms: Finding[];
}

/** A judged finding from its draft: provenance the judge derived is never refused, so a refusal is a bug and throws. */
export function build(draft: FindingDraft, provenance: Provenance): Finding {
  const r = makeFinding(draft, provenance);
  if (!r.ok) throw new TrajwatchError(`provenance refused: ${r.error.kind} on id ${r.error.id}`, { context: { ...r.error } });
  return r.value;
}

function base(t: Trajectory, w: TraceWindow): Pick<FindingDraft, 'analyst_id' | 'subject' | 'layer' | 'observed_at' | 'covariates'> {
  return {
    analyst_id: JUDGE_ANALYST_ID,
    subject: {
      trajectory_key: w.subject.trajectoryKey,
      trace_ids: w.traceIds,
      ...(w.subject.service === undefined ? {} : { service: w.subject.service }),
      ...(w.subject.agent === undefined ? {} : { agent: w.subject.agent }),
      revision: w.subject.revision,
    },
    layer: w.kind,
    observed_at: w.endedAt,
    covariates: {
      observed_at: w.endedAt,
      capture_complete: t.complete,
      ...(t.incompleteReasons.length > 0 ? { incomplete_reasons: [...t.incompleteReasons].sort() } : {}),
    },
  };
}

/**
 * A window as identity knows it: its kind, its anchor step and its extraction policy. Not its
 * id, which digests the trajectory revision: the same question answered the same way about the
 * window around the same step is one finding across revisions (the window id, the failure kind
 * of a failed call and the rest ride in the observation).
 */
function windowBasis(w: TraceWindow): string[] {
  return [`window:${w.kind}@span:${w.anchor}`, `window-policy:${w.policyDigest}`];
}

function windowName(w: TraceWindow): string {
  return `the ${w.kind} window at span ${w.anchor}`;
}

function refsOf(w: TraceWindow, eventIds?: readonly string[]): EvidenceRef[] {
  const seen = new Set<string>();
  const out: EvidenceRef[] = [];
  for (const e of w.events) {
    if (eventIds !== undefined && !eventIds.includes(e.id)) continue;
    for (const r of e.evidenceRefs) {
      if (seen.has(r.uri)) continue;
      seen.add(r.uri);
      out.push(r);
    }
  }
  return out;
}

/**
 * What a judged answer rests on: the window, led by its anchor span (`evidence_refs[0]`, the
 * span an OTLP evaluation event is parented to), then every event's refs in window order. The
 * model's selected support id is recorded in the observation (`support`), never promoted into
 * evidence: a support choice is a record-only classification, not grounding (the seed's rule).
 */
export function windowEvidence(w: TraceWindow): EvidenceRef[] {
  const [traceId, spanId] = w.anchor.split('/') as [string, string];
  const anchor = spanRef(traceId, spanId);
  return [anchor, ...refsOf(w).filter((r) => r.uri !== anchor.uri)];
}

/**
 * One finding per semantic question of a judged window (also for a failed call: the answer is
 * then null and the recommendation escalates), built from the durable result record alone so
 * an exact replay produces the same findings (same ids, same answers), marked as a replay.
 */
export function judgedFindings(t: Trajectory, w: TraceWindow, result: ResultRecord, provenance: Provenance, replay = false): WindowFindings {
  const accounting = receiptFields(result, replay);
  const findings: Finding[] = [];
  const alarms: Finding[] = [];
  for (const a of result.answers) {
    const q = questionById(a.questionId);
    const selected = a.support !== null && a.support !== UNRESOLVED_EVENT_ID ? a.support : null;
    const supportUris = selected === null ? [] : refsOf(w, [selected]).map((r) => r.uri);
    const claim =
      a.option === null
        ? `No valid judge answer to ${a.questionId}@${a.questionVersion} on ${windowName(w)}; escalated`
        : `Judge answered "${a.option}" to ${a.questionId}@${a.questionVersion} on ${windowName(w)}`;
    const finding = build(
      {
        ...base(t, w),
        area: a.questionId,
        claim,
        id_basis: [...windowBasis(w), `question:${a.questionId}@${a.questionVersion}`],
        severity: SEVERITY[a.recommendation.action],
        method: { kind: 'judged', name: `${JUDGE_ANALYST_ID}.${a.questionId}`, version: a.questionVersion },
        evidence_refs: windowEvidence(w),
        observation: {
          kind: 'record',
          name: 'trace-question',
          values: {
            question_id: a.questionId,
            question_version: a.questionVersion,
            options: q === undefined ? [] : [...q.options],
            answer: a.option,
            probabilities: a.probabilities,
            support: {
              selected: a.support,
              event_uris: supportUris,
              probability: a.supportProbability ?? null,
              recommendation: a.supportRecommendation ?? null,
            },
            recommendation: a.recommendation,
            window_recommendation: result.recommendation,
            certificate_id: a.certificateId,
            window_id: w.id,
            window_kind: w.kind,
            window_triggers: w.triggers,
            window_policy_digest: result.windowPolicyDigest,
            window_limitations: w.limitations,
            requested_model: result.requestedModel,
            served_model: result.servedModel,
            receipt: accounting.receipt,
            failure: result.failure,
            ledger_key: result.key,
          },
        },
        ...(accounting.replay === undefined ? {} : { replay: accounting.replay }),
      },
      provenance,
    );
    findings.push(finding);
    if (a.recommendation.action === 'act' && result.recommendation.action === 'act') alarms.push(finding);
  }
  return { findings, alarms };
}

/**
 * What a judged finding says it paid. First emission: the recorded receipt. Replay: zero new
 * physical calls, so no receipt of its own (null) and the original one kept as history under
 * `replay` — a consumer summing receipts counts each paid call once.
 */
function receiptFields(result: ResultRecord, replay: boolean): { receipt: ResultRecord['receipt'] | null; replay?: NonNullable<Finding['replay']> } {
  if (!replay) return { receipt: result.receipt };
  return { receipt: null, replay: { new_physical_calls: 0, original_receipt: result.receipt, original_recorded_at: result.recordedAt } };
}

/**
 * The ninth observation: exact tool repetition among the window's steps, by the inline rule
 * (`windowRepetition`). No model, no probabilities, no receipt. Positive support names the
 * repeated attempts; absence is claimed only from a complete capture of the window's tool
 * calls, else it is unavailable.
 */
export function repetitionFinding(t: Trajectory, w: TraceWindow, _checks: CheckResults, provenance: Provenance): Finding {
  const idByUri = new Map<string, string>();
  for (const e of w.events) for (const r of e.evidenceRefs) idByUri.set(r.uri, e.id);
  const groups: { tool_name: string; args_digest: string; event_ids: string[] }[] = [];
  // The window's own calls, by the inline rule (`checks.repetition` is the whole trajectory's).
  const rep = windowRepetition(t, w);
  if (rep.status === 'observed') {
    for (const g of rep.groups) {
      const ids = g.attempts.flatMap((a) => {
        const id = idByUri.get(`span:${a.traceId}/${a.spanId}`);
        return id === undefined ? [] : [id];
      });
      if (ids.length >= 2) groups.push({ tool_name: g.toolName, args_digest: g.argsDigest, event_ids: ids });
    }
  }
  const status = groups.length > 0 ? 'observed' : rep.status === 'none-observed' ? 'none-observed' : 'unavailable';
  const eventIds = groups.flatMap((g) => g.event_ids);
  const claim =
    status === 'observed'
      ? `Exact tool repetition observed in ${windowName(w)}`
      : status === 'none-observed'
        ? `No exact tool repetition in ${windowName(w)}`
        : `Exact tool repetition not observable in ${windowName(w)} (incomplete capture)`;
  return build(
    {
      ...base(t, w),
      area: REPETITION_QUESTION.id,
      claim,
      id_basis: [...windowBasis(w), `question:${REPETITION_QUESTION.id}@${REPETITION_QUESTION.version}`],
      severity: 'info',
      method: { kind: 'computed', name: `${JUDGE_ANALYST_ID}.${REPETITION_QUESTION.id}`, version: REPETITION_QUESTION.version },
      verdict: 'observed',
      evidence_refs: eventIds.length > 0 ? refsOf(w, eventIds) : refsOf(w),
      observation: {
        kind: 'record',
        name: 'trace-question',
        values: {
          question_id: REPETITION_QUESTION.id,
          question_version: REPETITION_QUESTION.version,
          status,
          groups,
          // Why absence could not be claimed: the capture limits, the gaps touching the window.
          ...(status === 'unavailable' && rep.status === 'unavailable' ? { reasons: [...rep.reasons] } : {}),
          support: { selected: eventIds.length > 0 ? eventIds : UNRESOLVED_EVENT_ID },
          recommendation: { action: 'record', route: null, reason: 'computed' },
          window_id: w.id,
          window_kind: w.kind,
        },
      },
    },
    provenance,
  );
}
