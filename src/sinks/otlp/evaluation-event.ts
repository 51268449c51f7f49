import { canonicalDigest } from '../../core/digest.ts';
import { audienceView, type Audience } from '../../findings/audience.ts';
import type { Finding } from '../../findings/schema.ts';
import type { FindingStream } from '../finding-sink.ts';

/** The GenAI semantic conventions' evaluation event and its attributes (semconv 1.45 / semantic-conventions-genai). */
export const EVALUATION_EVENT_NAME = 'gen_ai.evaluation.result';
export const ATTR = {
  name: 'gen_ai.evaluation.name',
  scoreValue: 'gen_ai.evaluation.score.value',
  scoreLabel: 'gen_ai.evaluation.score.label',
  explanation: 'gen_ai.evaluation.explanation',
  errorType: 'error.type',
} as const;

/** OTLP severity numbers (INFO, INFO2, WARN, ERROR) for a finding's severity. */
const SEVERITY_NUMBER = { info: 9, low: 10, medium: 13, high: 17 } as const;

export type EventAttributeValue = string | number | boolean | string[];

/**
 * One `gen_ai.evaluation.result` log record as the outbox stores it (JSON) and the exporter
 * sends it: parented to the finding's anchor span when it names one.
 */
export interface EvaluationEvent {
  /**
   * The anchor span: the first span (or span event) the finding's evidence points at — for a
   * judged finding its window's anchor (`windowEvidence`), never the model's selected support.
   */
  parent: { traceId: string; spanId: string } | null;
  /** The finding's `observed_at` (span time), ISO-8601 with nine fractional digits. */
  observedAt: string | null;
  severityNumber: number;
  severityText: string;
  attributes: Record<string, EventAttributeValue>;
  /** The finding in the sink's audience view, as JSON text. */
  body: string;
}

const SPAN_URI = /^(?:span|event):([0-9a-f]{32})\/([0-9a-f]{16})(?:\/\d+)?$/;

/**
 * A finding as an evaluation event. The conventions have no evaluator identity yet, so who
 * evaluated and how rides under `trajwatch.*`: analyst, method, finding id, certificate status
 * and the treatment and conditions digests (`unavailable` when provenance was). The body is
 * the finding in `audience`'s view; no attribute carries an internal field (certificate
 * status says whether a certificate stood, never its id). Pure.
 *
 * A sink reads only a finding's id and subject for sure (the sink contract writes partial
 * findings), so every other field is read defensively.
 */
export function evaluationEvent(finding: Finding, stream: FindingStream, audience: Audience): EvaluationEvent {
  const values = finding.observation?.kind === 'record' ? finding.observation.values : undefined;
  const answer = typeof values?.answer === 'string' ? values.answer : values?.answer === null ? null : undefined;
  const judged = finding.method?.kind === 'judged';
  const attributes: Record<string, EventAttributeValue> = {
    [ATTR.name]: finding.area ?? finding.method?.name ?? 'trajwatch',
    [ATTR.explanation]: finding.claim,
  };
  const label = answer ?? (typeof values?.status === 'string' ? values.status : finding.verdict);
  if (label !== undefined && label !== null) attributes[ATTR.scoreLabel] = label;
  const probability = answer !== null && answer !== undefined ? probabilityOf(values?.probabilities, answer) : undefined;
  if (probability !== undefined) attributes[ATTR.scoreValue] = probability;
  else if (finding.observation?.kind === 'tool-repetition') attributes[ATTR.scoreValue] = finding.observation.count;
  if (judged && answer === null) attributes[ATTR.errorType] = failureKind(values?.failure) ?? 'no_valid_answer';

  attributes['trajwatch.finding_id'] = finding.finding_id;
  attributes['trajwatch.stream'] = stream;
  attributes['trajwatch.audience'] = audience;
  attributes['trajwatch.trajectory_key'] = finding.subject.trajectory_key;
  attributes['trajwatch.revision'] = finding.subject.revision;
  if (finding.analyst_id !== undefined) attributes['trajwatch.analyst'] = finding.analyst_id;
  if (finding.method !== undefined) {
    attributes['trajwatch.method'] = `${finding.method.name}@${finding.method.version}`;
    attributes['trajwatch.method.kind'] = finding.method.kind;
  }
  if (finding.severity !== undefined) attributes['trajwatch.severity'] = finding.severity;
  attributes['trajwatch.certificate.status'] = !judged ? 'not-applicable' : typeof values?.certificate_id === 'string' ? 'certified' : 'uncertified';
  if (finding.treatment !== undefined)
    attributes['trajwatch.treatment.digest'] = finding.treatment === null ? 'unavailable' : canonicalDigest(finding.treatment);
  if (finding.conditions !== undefined)
    attributes['trajwatch.conditions.digest'] = finding.conditions === null ? 'unavailable' : canonicalDigest(finding.conditions);
  if (finding.replay !== undefined) attributes['trajwatch.replay'] = true;
  const refs = (finding.evidence_refs ?? []).map((r) => r.uri);
  if (refs.length > 0) attributes['trajwatch.evidence_refs'] = refs;

  const severity = finding.severity ?? 'info';
  return {
    parent: anchorOf(refs),
    observedAt: finding.observed_at ?? null,
    severityNumber: SEVERITY_NUMBER[severity],
    severityText: severity.toUpperCase(),
    attributes,
    body: JSON.stringify(audienceView(finding, audience)),
  };
}

function anchorOf(uris: readonly string[]): EvaluationEvent['parent'] {
  for (const uri of uris) {
    const m = SPAN_URI.exec(uri);
    if (m !== null) return { traceId: m[1]!, spanId: m[2]! };
  }
  return null;
}

function probabilityOf(probabilities: unknown, option: string): number | undefined {
  if (typeof probabilities !== 'object' || probabilities === null) return undefined;
  const p = (probabilities as Record<string, unknown>)[option];
  return typeof p === 'number' && Number.isFinite(p) ? p : undefined;
}

function failureKind(failure: unknown): string | undefined {
  if (typeof failure !== 'object' || failure === null) return undefined;
  const kind = (failure as Record<string, unknown>).kind;
  return typeof kind === 'string' && kind !== '' ? kind : undefined;
}
