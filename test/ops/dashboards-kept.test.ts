// The dashboards survived their move from the hand-kept model (dashboards/src/model.ts) onto
// Grafana's foundation SDK: the same uids, titles, rows, variables, exemplar panels, and every
// panel's type, title, query and legend. The SDK may emit a different shape around them.
import { describe, expect, it } from 'vitest';
import type { Dashboard } from '../../dashboards/src/panels.ts';
import { readShippedDashboards } from './shipped-dashboards.ts';

/**
 * Taken from the committed dashboards/json/*.json as the old model generated them (main at
 * af8fcd6, before the SDK), by reading each panel's targets: [panel type, panel title, expr,
 * legendFormat or null]. A change here is a change of what the dashboards show: make it on
 * purpose, never to follow the generator. (Since: counts over the range are round()ed, whole.)
 */
const BEFORE_THE_SDK = {
  'coordinator-alarms.json': {
    uid: 'trajwatch-coordinator-alarms',
    title: 'trajwatch / Coordinator alarms',
    rows: ['Alarms', 'Decisions and calibration', 'Candidates behind the alarms'],
    variables: ['question', 'service', 'agent', 'trace_url'],
    exemplarPanels: ['Alarm rate by question', 'Alarm rate by service', 'Alarm rate by agent', 'Findings by analyst'],
    queries: [
      [
        'stat',
        'Alarms in range',
        'round(sum(increase(trajwatch_coordinator_alarms_total{question=~"$question",service=~"$service",agent=~"$agent"}[$__range])))',
        null,
      ],
      ['stat', 'Escalations in range', 'round(sum(increase(trajwatch_decisions_total{action="escalate",question=~"$question"}[$__range])))', null],
      [
        'timeseries',
        'Alarm rate by question',
        'sum by (question) (rate(trajwatch_coordinator_alarms_total{question=~"$question",service=~"$service",agent=~"$agent"}[$__rate_interval]))',
        '{{question}}',
      ],
      [
        'timeseries',
        'Alarm rate by service',
        'sum by (service) (rate(trajwatch_coordinator_alarms_total{question=~"$question",service=~"$service",agent=~"$agent"}[$__rate_interval]))',
        '{{service}}',
      ],
      [
        'timeseries',
        'Alarm rate by agent',
        'sum by (agent) (rate(trajwatch_coordinator_alarms_total{question=~"$question",service=~"$service",agent=~"$agent"}[$__rate_interval]))',
        '{{agent}}',
      ],
      [
        'table',
        'Latest alarms by question, service and agent',
        'sort_desc(round(sum by (question, service, agent) (increase(trajwatch_coordinator_alarms_total{question=~"$question",service=~"$service",agent=~"$agent"}[$__range]))))',
        null,
      ],
      ['timeseries', 'Decisions by action', 'sum by (action) (rate(trajwatch_decisions_total{question=~"$question"}[$__rate_interval]))', '{{action}}'],
      [
        'timeseries',
        'Escalations by question',
        'sum by (question) (rate(trajwatch_decisions_total{action="escalate",question=~"$question"}[$__rate_interval]))',
        '{{question}}',
      ],
      ['stat', 'Calibration status per question', 'max by (question) (trajwatch_calibration_certified{question=~"$question"})', '{{question}}'],
      ['timeseries', 'L0 hits by pattern', 'sum by (pattern) (rate(trajwatch_l0_hits_total[$__rate_interval]))', '{{pattern}}'],
      ['timeseries', 'Findings by analyst', 'sum by (analyst) (rate(trajwatch_findings_total[$__rate_interval]))', '{{analyst}}'],
    ],
  },
  'operations.json': {
    uid: 'trajwatch-operations',
    title: 'trajwatch / Operations',
    rows: ['Ingest', 'Trajectories and backpressure', 'Sinks and outbox', 'Windows and judge', 'Process'],
    variables: [],
    exemplarPanels: [],
    queries: [
      [
        'timeseries',
        'Spans received',
        'sum by (transport, content_type) (rate(trajwatch_spans_received_total[$__rate_interval]))',
        '{{transport}} {{content_type}}',
      ],
      ['timeseries', 'Requests by status', 'sum by (transport, status) (rate(trajwatch_otlp_requests_total[$__rate_interval]))', '{{transport}} {{status}}'],
      ['timeseries', 'Requests refused by reason', 'sum by (reason) (rate(trajwatch_otlp_requests_refused_total[$__rate_interval]))', '{{reason}}'],
      [
        'timeseries',
        'Spans refused (partial success)',
        'sum by (transport, content_type) (rate(trajwatch_spans_refused_total[$__rate_interval]))',
        '{{transport}} {{content_type}}',
      ],
      ['stat', 'Open trajectories', 'sum(trajwatch_trajectories_open)', null],
      ['stat', 'Buffered bytes', 'sum(trajwatch_buffered_bytes)', null],
      [
        'timeseries',
        'Trajectories closed',
        'sum by (completeness, closed_by) (rate(trajwatch_trajectories_closed_total[$__rate_interval]))',
        '{{completeness}} ({{closed_by}})',
      ],
      ['timeseries', 'Incomplete reasons', 'sum by (reason) (rate(trajwatch_trajectory_incomplete_reasons_total[$__rate_interval]))', '{{reason}}'],
      ['timeseries', 'Capture gaps', 'sum by (reason) (rate(trajwatch_trajectory_capture_gaps_total[$__rate_interval]))', '{{reason}}'],
      ['timeseries', 'Held bytes', 'sum(trajwatch_buffered_bytes)', 'buffered (open)'],
      ['timeseries', 'Held bytes', 'sum(trajwatch_retained_bytes)', 'retained (closed, for late spans)'],
      ['timeseries', 'Capture anomalies since start', 'sum(trajwatch_spans_deduplicated)', 'duplicates merged'],
      ['timeseries', 'Capture anomalies since start', 'sum(trajwatch_capture_conflicts)', 'conflicts'],
      ['timeseries', 'Capture anomalies since start', 'sum(trajwatch_late_spans)', 'late spans'],
      [
        'timeseries',
        'Steps per trajectory (p50, p95)',
        'histogram_quantile(0.5, sum by (le) (rate(trajwatch_trajectory_steps_bucket[$__rate_interval])))',
        'p50',
      ],
      [
        'timeseries',
        'Steps per trajectory (p50, p95)',
        'histogram_quantile(0.95, sum by (le) (rate(trajwatch_trajectory_steps_bucket[$__rate_interval])))',
        'p95',
      ],
      ['timeseries', 'Tool repetitions', 'sum(rate(trajwatch_tool_repetitions_total[$__rate_interval]))', 'repetitions'],
      ['timeseries', 'Sink backlog (records)', 'sum by (sink) (trajwatch_sink_backlog_records)', '{{sink}}'],
      ['timeseries', 'Sink backlog (bytes)', 'sum by (sink) (trajwatch_sink_backlog_bytes)', '{{sink}}'],
      ['timeseries', 'Kafka records', 'sum(rate(trajwatch_kafka_delivered_total[$__rate_interval]))', 'acknowledged'],
      ['timeseries', 'Kafka records', 'sum by (reason) (rate(trajwatch_kafka_outbox_refused_total[$__rate_interval]))', 'refused {{reason}}'],
      [
        'timeseries',
        'Kafka produce latency (p95)',
        'histogram_quantile(0.95, sum by (le) (rate(trajwatch_kafka_produce_seconds_bucket[$__rate_interval])))',
        'p95',
      ],
      ['timeseries', 'Kafka produce errors', 'sum(rate(trajwatch_kafka_produce_errors_total[$__rate_interval]))', 'errors'],
      ['timeseries', 'Windows by outcome', 'sum by (outcome, reason) (rate(trajwatch_windows_total[$__rate_interval]))', '{{outcome}} {{reason}}'],
      ['timeseries', 'Judge calls by outcome', 'sum by (outcome) (rate(trajwatch_judge_calls_total[$__rate_interval]))', '{{outcome}}'],
      ['timeseries', 'Judge latency (p95)', 'histogram_quantile(0.95, sum by (le) (rate(trajwatch_judge_latency_seconds_bucket[$__rate_interval])))', 'p95'],
      ['timeseries', 'Judge tokens', 'sum by (kind) (rate(trajwatch_judge_tokens_total[$__rate_interval]))', '{{kind}}'],
      ['stat', 'Judge cost in range', 'sum(increase(trajwatch_judge_cost_usd_total[$__range]))', null],
      ['stat', 'Judge budget remaining', 'max by (budget) (trajwatch_judge_budget_remaining)', '{{budget}}'],
      ['timeseries', 'Judge failures by reason', 'sum by (reason) (rate(trajwatch_judge_failures_total[$__rate_interval]))', '{{reason}}'],
      ['timeseries', 'Memory', 'process_resident_memory_bytes{job="trajwatch"}', 'resident {{instance}}'],
      ['timeseries', 'Memory', 'nodejs_heap_size_used_bytes{job="trajwatch"}', 'heap used {{instance}}'],
      ['timeseries', 'Event loop lag (p99)', 'nodejs_eventloop_lag_p99_seconds{job="trajwatch"}', '{{instance}}'],
      ['stat', 'Scrape up', 'up{job="trajwatch"}', '{{instance}}'],
    ],
  },
} as const;

describe('the dashboards kept through the move onto the SDK', () => {
  const shipped = readShippedDashboards();

  it('ships the same dashboards', () => {
    expect(shipped.map((d) => d.file)).toEqual(Object.keys(BEFORE_THE_SDK));
  });

  describe.each(shipped.map((d) => [d.file, d.json] as const))('%s', (file, json) => {
    const before = BEFORE_THE_SDK[file as keyof typeof BEFORE_THE_SDK];
    const panels = json.panels.filter((p) => p.type !== 'row');
    const legend = (t: { legendFormat?: string }) => t.legendFormat ?? null;

    it('keeps its uid, title, rows and variables', () => {
      expect(json.uid).toBe(before.uid);
      expect(json.title).toBe(before.title);
      expect(json.panels.filter((p) => p.type === 'row').map((p) => p.title)).toEqual(before.rows);
      expect(json.templating.list.map((v) => v.name)).toEqual(before.variables);
    });

    it('keeps every panel with its type, title, queries and legends, in order', () => {
      const now = panels.flatMap((p) => (p.targets ?? []).map((t) => [p.type, p.title, t.expr, legend(t as { legendFormat?: string })]));
      expect(now).toEqual(before.queries);
    });

    it('keeps exemplars on the same panels', () => {
      expect(panels.filter((p) => p.targets?.some((t) => t.exemplar === true)).map((p) => p.title)).toEqual(before.exemplarPanels);
    });
  });

  it('type-checks a dashboard against @grafana/schema: tsc rejects a malformed panel', () => {
    // Each line below is a type error, which `@ts-expect-error` requires: were the check gone,
    // `tsc --noEmit` (npm run typecheck) would fail here.
    const malformed: Dashboard[] = [
      // @ts-expect-error gridPos.h is a number
      { schemaVersion: 42, panels: [{ type: 'timeseries', gridPos: { h: 'eight', w: 12, x: 0, y: 0 } }] },
      // @ts-expect-error a panel's targets are a list of queries
      { schemaVersion: 42, panels: [{ type: 'timeseries', targets: 'up' }] },
      // @ts-expect-error a value mapping's type is one of value, range, regex, special
      { schemaVersion: 42, panels: [{ type: 'stat', fieldConfig: { defaults: { mappings: [{ type: 'values', options: {} }] }, overrides: [] } }] },
      // @ts-expect-error a dashboard has a schemaVersion
      { title: 'no version' },
    ];
    expect(malformed).toHaveLength(4);
  });
});
