import { Counter, type Registry } from 'prom-client';
import type { Analysis } from '../analyze.ts';
import { captureGaps } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import type { Finding } from '../findings/schema.ts';
import type { PipelineOptions } from './options.ts';
import { counter, histogram, type MetricRegistry, mirrorCounter, type Reading } from '../telemetry/metrics.ts';

/** The pipeline's observers, ready to spread into {@link PipelineOptions}, plus the analyzer's. */
export interface PipelineMetrics extends Required<Pick<PipelineOptions, 'onTrajectory' | 'onManifest' | 'onDurable' | 'onJudged'>> {
  /** A treatment or conditions input the analyzer refused (`createAnalyzer`'s observer). */
  onProvenanceIssue(issue: { reason: string }): void;
}

const OFF: PipelineMetrics = {
  onTrajectory: () => {},
  onManifest: () => {},
  onDurable: () => {},
  onJudged: () => {},
  onProvenanceIssue: () => {},
};

type ExemplarLabel = 'trace_id' | 'finding_id';

/**
 * The exemplar a finding or alarm leaves on its counter series (OpenMetrics scrapes only): the
 * latest one per series, so a panel's point links to a trace and a finding behind it. The
 * trajectory's first trace: a trajectory keyed by trace has one, and any of several leads to
 * the run. 40 + 77 characters, within OpenMetrics' 128 for an exemplar's labels.
 */
export function exemplarOf(f: Finding): Record<ExemplarLabel, string> {
  return { trace_id: f.subject.trace_ids[0]!, finding_id: f.finding_id };
}

/**
 * A counter that keeps exemplars, registered in the text-format registry. prom-client refuses
 * `enableExemplars` on a registry whose format is the Prometheus text format, but only at
 * construction; registered afterwards, the counter writes plain series there (that format has
 * no exemplars) and its exemplars reach OpenMetrics scrapes (`telemetry/openmetrics.ts`). The
 * exemplar's label names join the type parameter only because prom-client types
 * `exemplarLabels` with the series' own label names; `labelNames` stays the series' labels.
 */
function exemplarCounter<const L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Counter<L | ExemplarLabel> {
  const counter = new Counter<L | ExemplarLabel>({ name, help, labelNames, enableExemplars: true, registers: [] });
  registry.registerMetric(counter);
  return counter;
}

/** Buckets in seconds, from an fsync on a fast disk to a broker that is retrying elections. */
const DURABLE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The pipeline's series: what closed (trajectories by completeness, reasons, capture gaps,
 * steps), what the analysis found (findings, L0 hits, repetitions, provenance issues, check
 * statuses, window fates), judged decisions and alarms, and durability latency, fed by the
 * returned observers. A no-op without a registry.
 */
export function pipelineMetrics(registry: MetricRegistry): PipelineMetrics {
  if (registry === undefined) return OFF;
  const trajectoriesClosed = counter(registry, 'trajwatch_trajectories_closed_total', 'Trajectories closed, by completeness and by what closed them.', [
    'completeness',
    'closed_by',
  ]);
  const byReason = (name: string, help: string) => counter(registry, name, help, ['reason']);
  const incompleteReasons = byReason(
    'trajwatch_trajectory_incomplete_reasons_total',
    'Reasons named by incomplete trajectories (one trajectory can name several).',
  );
  const gaps = byReason(
    'trajwatch_trajectory_capture_gaps_total',
    'Closed trajectories naming each capture gap (what the instrumentation did not record; one trajectory can name several).',
  );
  const steps = histogram(registry, 'trajwatch_trajectory_steps', 'Steps per closed trajectory.', [1, 5, 10, 25, 50, 100, 250, 1000, 10_000]);
  const l0Hits = counter(registry, 'trajwatch_l0_hits_total', 'L0 patterns fired (candidates, not verdicts), by pattern.', ['pattern']);
  // No tool-name label: names come from the telemetry, and a label must stay bounded.
  const repetitions = counter(registry, 'trajwatch_tool_repetitions_total', 'Groups of identical tool calls (same tool, same canonical arguments) observed.');
  const findings = exemplarCounter(registry, 'trajwatch_findings_total', 'Findings emitted, by analyst and severity.', ['analyst', 'severity']);
  const durable = histogram(
    registry,
    'trajwatch_finding_durable_seconds',
    "From a trajectory's close to its findings being durable (local log) or acknowledged (Kafka), by sink; sampled.",
    DURABLE_BUCKETS,
    ['sink'],
  );
  const provenanceIssues = byReason('trajwatch_provenance_issues_total', 'Treatment or conditions inputs refused (e.g. one id with two contents), by reason.');
  const checkStatuses = counter(
    registry,
    'trajwatch_check_status_total',
    'Per closed trajectory revision (analysis manifest), each check by status: fired, observed, none-observed, or unavailable with its reason.',
    ['check', 'status', 'reason'],
  );
  const windowFates = counter(
    registry,
    'trajwatch_window_fates_total',
    'Windows named by analysis manifests, by fate (judged, refused, deferred, not-sampled) and reason.',
    ['fate', 'reason'],
  );
  const decisions = counter(registry, 'trajwatch_decisions_total', 'Judged answers by recommended action (act / escalate / record) and question.', [
    'action',
    'question',
  ]);
  const alarms = exemplarCounter(
    registry,
    'trajwatch_coordinator_alarms_total',
    'Coordinator alarms recommended (calibrated act answers), by question, service and agent.',
    ['question', 'service', 'agent'],
  );
  return {
    onTrajectory(t: Trajectory, analysis: Analysis) {
      trajectoriesClosed.inc({ completeness: t.complete ? 'complete' : 'incomplete', closed_by: t.closedBy });
      for (const reason of t.incompleteReasons) incompleteReasons.inc({ reason });
      for (const gap of captureGaps(t.steps)) gaps.inc({ reason: gap.reason });
      steps.observe(t.steps.length);
      for (const f of analysis.findings) {
        findings.inc({ labels: { analyst: f.analyst_id, severity: f.severity }, exemplarLabels: exemplarOf(f) });
        if (f.analyst_id === 'l0') l0Hits.inc({ pattern: f.area });
        if (f.analyst_id === 'tool-repetition') repetitions.inc();
      }
    },
    onManifest(m: AnalysisManifest) {
      for (const c of m.checks) checkStatuses.inc({ check: c.check, status: c.status, reason: c.reason ?? '' });
      for (const w of m.windows) windowFates.inc({ fate: w.fate, reason: w.reason ?? '' });
    },
    onDurable(sink: string, seconds: number) {
      durable.observe({ sink }, seconds);
    },
    onJudged(judged: readonly Finding[], alarmed: readonly Finding[]) {
      for (const f of judged) {
        const recommendation = f.observation?.kind === 'record' ? f.observation.values.recommendation : undefined;
        const action = (recommendation as { action?: unknown } | undefined)?.action;
        if (typeof action === 'string') decisions.inc({ action, question: f.area });
      }
      for (const a of alarmed)
        alarms.inc({ labels: { question: a.area, service: a.subject.service ?? '', agent: a.subject.agent ?? '' }, exemplarLabels: exemplarOf(a) });
    },
    onProvenanceIssue(issue: { reason: string }) {
      provenanceIssues.inc({ reason: issue.reason });
    },
  };
}

/** `trajwatch_logs_total{outcome}`, mirrored at scrape time from `Pipeline.logOutcomes`. */
export function registerLogOutcomeMetrics(registry: MetricRegistry, read: () => Record<string, number>): void {
  if (registry === undefined) return;
  mirrorCounter(
    registry,
    'trajwatch_logs_total',
    'OTLP log records by outcome: held (for its span), joined, no-new-facts, span-missing, late, duplicate, not-content-event, no-span-context, refused.',
    ['outcome'],
    () => Object.entries(read()).map(([outcome, n]): Reading => [{ outcome }, n]),
  );
}
