import { buildDashboard, type Dashboard, stat, timeseries } from './panels.ts';

const RATE = '[$__rate_interval]';

function p95(histogram: string): string {
  return `histogram_quantile(0.95, sum by (le) (rate(${histogram}_bucket${RATE})))`;
}

/**
 * The operations dashboard: throughput, refusals, backpressure, open trajectories, sink
 * backlog (the Kafka outbox), windows, judge budget and cost, process health.
 */
export function operations(): Dashboard {
  return buildDashboard({
    uid: 'trajwatch-operations',
    title: 'trajwatch / Operations',
    description: 'Throughput, refusals, backpressure, open trajectories, outbox, judge budget and cost.',
    tags: ['trajwatch', 'operations'],
    rows: [
      {
        title: 'Ingest',
        panels: [
          timeseries(
            'Spans received',
            'Spans accepted into the assembler, by transport and content type.',
            [{ expr: `sum by (transport, content_type) (rate(trajwatch_spans_received_total${RATE}))`, legend: '{{transport}} {{content_type}}' }],
            'ops',
          ),
          timeseries(
            'Requests by status',
            'OTLP export requests answered, by status.',
            [{ expr: `sum by (transport, status) (rate(trajwatch_otlp_requests_total${RATE}))`, legend: '{{transport}} {{status}}' }],
            'reqps',
          ),
          timeseries(
            'Requests refused by reason',
            'Whole requests refused: limits, backpressure, undecodable input, content type.',
            [{ expr: `sum by (reason) (rate(trajwatch_otlp_requests_refused_total${RATE}))`, legend: '{{reason}}' }],
            'reqps',
          ),
          timeseries(
            'Spans refused (partial success)',
            'Spans refused inside otherwise accepted requests and reported to the sender.',
            [{ expr: `sum by (transport, content_type) (rate(trajwatch_spans_refused_total${RATE}))`, legend: '{{transport}} {{content_type}}' }],
            'ops',
          ),
        ],
      },
      {
        title: 'Trajectories and backpressure',
        panels: [
          stat('Open trajectories', 'Trajectories buffered and not yet closed.', [{ expr: 'sum(trajwatch_trajectories_open)' }], 'none', 6),
          stat(
            'Buffered bytes',
            'Encoded bytes of spans in open trajectories (the assembler bound applies to this).',
            [{ expr: 'sum(trajwatch_buffered_bytes)' }],
            'bytes',
            6,
          ),
          timeseries(
            'Trajectories closed',
            'Closed trajectories, by completeness and by what closed them.',
            [{ expr: `sum by (completeness, closed_by) (rate(trajwatch_trajectories_closed_total${RATE}))`, legend: '{{completeness}} ({{closed_by}})' }],
            'ops',
          ),
          timeseries(
            'Incomplete reasons',
            'Reasons named by incomplete trajectories.',
            [{ expr: `sum by (reason) (rate(trajwatch_trajectory_incomplete_reasons_total${RATE}))`, legend: '{{reason}}' }],
            'ops',
          ),
          timeseries(
            'Capture gaps',
            'What the instrumentation did not record (tool names, requested calls, arguments, results), by reason: never an agent fault; silences the absence claims it could falsify.',
            [{ expr: `sum by (reason) (rate(trajwatch_trajectory_capture_gaps_total${RATE}))`, legend: '{{reason}}' }],
            'ops',
          ),
          timeseries(
            'Held bytes',
            'Bytes held in open trajectories and kept for late spans.',
            [
              { expr: 'sum(trajwatch_buffered_bytes)', legend: 'buffered (open)' },
              { expr: 'sum(trajwatch_retained_bytes)', legend: 'retained (closed, for late spans)' },
            ],
            'bytes',
          ),
          timeseries(
            'Capture anomalies since start',
            'Duplicate spans merged, conflicting re-sends, late spans.',
            [
              { expr: 'sum(trajwatch_spans_deduplicated)', legend: 'duplicates merged' },
              { expr: 'sum(trajwatch_capture_conflicts)', legend: 'conflicts' },
              { expr: 'sum(trajwatch_late_spans)', legend: 'late spans' },
            ],
            'none',
          ),
          timeseries(
            'Steps per trajectory (p50, p95)',
            'Distribution of steps in closed trajectories.',
            [
              { expr: `histogram_quantile(0.5, sum by (le) (rate(trajwatch_trajectory_steps_bucket${RATE})))`, legend: 'p50' },
              { expr: p95('trajwatch_trajectory_steps'), legend: 'p95' },
            ],
            'none',
          ),
          timeseries(
            'Tool repetitions',
            'Groups of identical tool calls found.',
            [{ expr: `sum(rate(trajwatch_tool_repetitions_total${RATE}))`, legend: 'repetitions' }],
            'ops',
          ),
        ],
      },
      {
        title: 'Sinks and outbox',
        panels: [
          timeseries(
            'Sink backlog (records)',
            'Records not yet durable or acknowledged, per sink; for Kafka this is the outbox depth.',
            [{ expr: 'sum by (sink) (trajwatch_sink_backlog_records)', legend: '{{sink}}' }],
            'none',
          ),
          timeseries(
            'Sink backlog (bytes)',
            'Bytes not yet durable or acknowledged, per sink.',
            [{ expr: 'sum by (sink) (trajwatch_sink_backlog_bytes)', legend: '{{sink}}' }],
            'bytes',
          ),
          timeseries(
            'Kafka records',
            'Records the broker acknowledged, and writes the outbox refused by reason (full: retried when room frees; too-large: never sendable).',
            [
              { expr: `sum(rate(trajwatch_kafka_delivered_total${RATE}))`, legend: 'acknowledged' },
              { expr: `sum by (reason) (rate(trajwatch_kafka_outbox_refused_total${RATE}))`, legend: 'refused {{reason}}' },
            ],
            'ops',
          ),
          timeseries(
            'Kafka produce latency (p95)',
            'Time from send to broker acknowledgement.',
            [{ expr: p95('trajwatch_kafka_produce_seconds'), legend: 'p95' }],
            's',
          ),
          timeseries(
            'Kafka produce errors',
            'Produce requests that failed.',
            [{ expr: `sum(rate(trajwatch_kafka_produce_errors_total${RATE}))`, legend: 'errors' }],
            'ops',
          ),
        ],
      },
      {
        title: 'Windows and judge',
        panels: [
          timeseries(
            'Windows by outcome',
            'Windows extracted for the judge, refused or deferred, by reason.',
            [{ expr: `sum by (outcome, reason) (rate(trajwatch_windows_total${RATE}))`, legend: '{{outcome}} {{reason}}' }],
            'ops',
          ),
          timeseries(
            'Judge calls by outcome',
            'Judge calls, by outcome.',
            [{ expr: `sum by (outcome) (rate(trajwatch_judge_calls_total${RATE}))`, legend: '{{outcome}}' }],
            'ops',
          ),
          timeseries(
            'Judge latency (p95)',
            'Judge call duration, retries and backoff included.',
            [{ expr: p95('trajwatch_judge_latency_seconds'), legend: 'p95' }],
            's',
          ),
          timeseries(
            'Judge tokens',
            'Tokens spent, prompt and completion.',
            [{ expr: `sum by (kind) (rate(trajwatch_judge_tokens_total${RATE}))`, legend: '{{kind}}' }],
            'short',
          ),
          stat(
            'Judge cost in range',
            'Judge spend in the selected range.',
            [{ expr: 'sum(increase(trajwatch_judge_cost_usd_total[$__range]))' }],
            'currencyUSD',
            6,
          ),
          stat(
            'Judge budget remaining',
            'What is left of each judge budget.',
            [{ expr: 'max by (budget) (trajwatch_judge_budget_remaining)', legend: '{{budget}}' }],
            'none',
            6,
          ),
          timeseries(
            'Judge failures by reason',
            'Judge calls that failed, by reason.',
            [{ expr: `sum by (reason) (rate(trajwatch_judge_failures_total${RATE}))`, legend: '{{reason}}' }],
            'ops',
          ),
        ],
      },
      {
        title: 'Process',
        panels: [
          timeseries(
            'Memory',
            'Resident memory and V8 heap in use.',
            [
              { expr: 'process_resident_memory_bytes{job="trajwatch"}', legend: 'resident {{instance}}' },
              { expr: 'nodejs_heap_size_used_bytes{job="trajwatch"}', legend: 'heap used {{instance}}' },
            ],
            'bytes',
            8,
          ),
          timeseries(
            'Event loop lag (p99)',
            'Event loop delay: a busy loop delays every request.',
            [{ expr: 'nodejs_eventloop_lag_p99_seconds{job="trajwatch"}', legend: '{{instance}}' }],
            's',
            8,
          ),
          stat('Scrape up', 'Whether Prometheus reaches each trajwatch instance (1 up).', [{ expr: 'up{job="trajwatch"}', legend: '{{instance}}' }], 'none', 8),
        ],
      },
    ],
  });
}
