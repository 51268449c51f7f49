import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AssemblerStats } from '../assemble/assembler.ts';
import { captureGaps } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import type { Finding } from '../findings/schema.ts';
import type { DecisionPointStats, JudgeCall } from '../judge/decision-points.ts';
import type { KafkaSinkStats } from '../sinks/kafka/sink.ts';

/** Numbers read at scrape time from the parts that own them (no cost between scrapes). */
export interface LiveReadings {
  assembler: () => AssemblerStats;
  /** Pending (not yet durable / acknowledged) records per sink. */
  sinkBacklog?: () => Record<string, { records?: number; bytes: number }>;
  /** The judge's counters, when decision points run. */
  judge?: () => DecisionPointStats;
  /** The Kafka sink's counters, when findings go to Kafka. */
  kafka?: () => KafkaSinkStats;
  /** OTLP log records by outcome (`Pipeline.logOutcomes`), when the receivers take logs. */
  logs?: () => Record<string, number>;
}

/**
 * A counter that mirrors a running total owned elsewhere: at scrape time it advances by
 * what the owner counted since the last scrape. A series exists once the owner reports it
 * (a reported 0 shows as 0; a total the owner does not know stays absent).
 */
function mirrorCounter(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly string[],
  read: () => Iterable<[Record<string, string>, number]>,
): void {
  const last = new Map<string, number>();
  const counter = new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const [labels, total] of read()) {
        const key = JSON.stringify(labels);
        const seen = last.get(key);
        const delta = total - (seen ?? 0);
        if (delta > 0 || seen === undefined) this.inc(labels, Math.max(0, delta));
        last.set(key, total);
      }
    },
  });
  // prom-client starts a label-less counter at 0; here only the owner's report creates it.
  if (labelNames.length === 0) counter.remove({});
}

const JUDGE_CALL_OUTCOMES: readonly JudgeCall['outcome'][] = ['answered', 'bad-answer', 'timeout', 'cancelled', 'network', 'http', 'bad-response'];

/** Seconds, from a fast local call to a slow model behind a queue. */
const JUDGE_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Seconds, from a loopback broker to one that is retrying elections. */
const PRODUCE_LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const byReason = (counts: Record<string, number>, outcome: string): [Record<string, string>, number][] =>
  Object.entries(counts).map(([reason, n]) => [{ outcome, reason }, n]);

/**
 * trajwatch's Prometheus metrics (`trajwatch_` prefix, `_total` counters, base units).
 * Every refusal and drop is counted by reason: nothing disappears without a number.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'trajwatch_otlp_requests_total',
    help: 'OTLP export requests answered, by transport, HTTP status and content type.',
    labelNames: ['transport', 'status', 'content_type'] as const,
    registers: [this.registry],
  });
  readonly requestsRefused = new Counter({
    name: 'trajwatch_otlp_requests_refused_total',
    help: 'OTLP export requests refused whole, by reason (limit, backpressure, bad input).',
    labelNames: ['transport', 'reason'] as const,
    registers: [this.registry],
  });
  readonly spansReceived = new Counter({
    name: 'trajwatch_spans_received_total',
    help: 'Spans decoded and accepted into the assembler, by transport and content type.',
    labelNames: ['transport', 'content_type'] as const,
    registers: [this.registry],
  });
  readonly spansRefused = new Counter({
    name: 'trajwatch_spans_refused_total',
    help: 'Spans refused and reported to the sender (partial success), by transport and content type.',
    labelNames: ['transport', 'content_type'] as const,
    registers: [this.registry],
  });
  readonly logRecordsReceived = new Counter({
    name: 'trajwatch_log_records_received_total',
    help: 'OTLP log records decoded and accepted, by transport and content type (what became of them: trajwatch_logs_total).',
    labelNames: ['transport', 'content_type'] as const,
    registers: [this.registry],
  });
  readonly logRecordsRefused = new Counter({
    name: 'trajwatch_log_records_refused_total',
    help: 'OTLP log records reported refused to the sender (partial success: malformed ids, content events naming no span).',
    labelNames: ['transport', 'content_type'] as const,
    registers: [this.registry],
  });
  readonly trajectoriesClosed = new Counter({
    name: 'trajwatch_trajectories_closed_total',
    help: 'Trajectories closed, by completeness and by what closed them.',
    labelNames: ['completeness', 'closed_by'] as const,
    registers: [this.registry],
  });
  readonly incompleteReasons = new Counter({
    name: 'trajwatch_trajectory_incomplete_reasons_total',
    help: 'Reasons named by incomplete trajectories (one trajectory can name several).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly captureGaps = new Counter({
    name: 'trajwatch_trajectory_capture_gaps_total',
    help: 'Closed trajectories naming each capture gap (what the instrumentation did not record; one trajectory can name several).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly trajectorySteps = new Histogram({
    name: 'trajwatch_trajectory_steps',
    help: 'Steps per closed trajectory.',
    buckets: [1, 5, 10, 25, 50, 100, 250, 1000, 10_000],
    registers: [this.registry],
  });
  readonly l0Hits = new Counter({
    name: 'trajwatch_l0_hits_total',
    help: 'L0 patterns fired (candidates, not verdicts), by pattern.',
    labelNames: ['pattern'] as const,
    registers: [this.registry],
  });
  readonly repetitions = new Counter({
    name: 'trajwatch_tool_repetitions_total',
    // No tool-name label: names come from the telemetry, and a label must stay bounded.
    help: 'Groups of identical tool calls (same tool, same canonical arguments) observed.',
    registers: [this.registry],
  });
  readonly findings = new Counter({
    name: 'trajwatch_findings_total',
    help: 'Findings emitted, by analyst and severity.',
    labelNames: ['analyst', 'severity'] as const,
    registers: [this.registry],
  });
  readonly findingDurable = new Histogram({
    name: 'trajwatch_finding_durable_seconds',
    help: "From a trajectory's close to its findings being durable (local log) or acknowledged (Kafka), by sink; sampled.",
    labelNames: ['sink'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly provenanceIssues = new Counter({
    name: 'trajwatch_provenance_issues_total',
    help: 'Treatment or conditions inputs refused (e.g. one id with two contents), by reason.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly checkStatuses = new Counter({
    name: 'trajwatch_check_status_total',
    help: 'Per closed trajectory revision (analysis manifest), each check by status: fired, observed, none-observed, or unavailable with its reason.',
    labelNames: ['check', 'status', 'reason'] as const,
    registers: [this.registry],
  });
  readonly windowFates = new Counter({
    name: 'trajwatch_window_fates_total',
    help: 'Windows named by analysis manifests, by fate (judged, refused, deferred, not-sampled) and reason.',
    labelNames: ['fate', 'reason'] as const,
    registers: [this.registry],
  });

  readonly decisions = new Counter({
    name: 'trajwatch_decisions_total',
    help: 'Judged answers by recommended action (act / escalate / record) and question.',
    labelNames: ['action', 'question'] as const,
    registers: [this.registry],
  });
  readonly alarms = new Counter({
    name: 'trajwatch_coordinator_alarms_total',
    help: 'Coordinator alarms recommended (calibrated act answers), by question, service and agent.',
    labelNames: ['question', 'service', 'agent'] as const,
    registers: [this.registry],
  });

  /** Judge call latency; present when the judge runs (`live.judge`). */
  readonly judgeLatency: Histogram<'outcome'> | undefined;
  /** Kafka produce request latency and size; present when findings go to Kafka (`live.kafka`). */
  readonly kafkaProduceLatency: Histogram | undefined;
  readonly kafkaProduceRecords: Histogram | undefined;

  constructor(live: LiveReadings) {
    collectDefaultMetrics({ register: this.registry });
    const reg = [this.registry];
    new Gauge({
      name: 'trajwatch_trajectories_open',
      help: 'Trajectories buffered and not yet closed.',
      registers: reg,
      collect() {
        this.set(live.assembler().openTrajectories);
      },
    });
    new Gauge({
      name: 'trajwatch_buffered_bytes',
      help: 'Encoded bytes of the spans buffered in open trajectories.',
      registers: reg,
      collect() {
        this.set(live.assembler().bufferedBytes);
      },
    });
    new Gauge({
      name: 'trajwatch_retained_bytes',
      help: 'Encoded bytes of closed trajectories kept for late spans.',
      registers: reg,
      collect() {
        this.set(live.assembler().retainedBytes);
      },
    });
    new Gauge({
      name: 'trajwatch_spans_deduplicated',
      help: 'Exact duplicate span exports merged since start.',
      registers: reg,
      collect() {
        this.set(live.assembler().duplicateSpans);
      },
    });
    new Gauge({
      name: 'trajwatch_capture_conflicts',
      help: 'Spans whose id arrived again with a different payload since start (first kept, recorded).',
      registers: reg,
      collect() {
        this.set(live.assembler().conflictingSpans);
      },
    });
    new Gauge({
      name: 'trajwatch_late_spans',
      help: 'Spans that arrived after their trajectory closed and opened a new revision, since start.',
      registers: reg,
      collect() {
        this.set(live.assembler().lateSpans);
      },
    });
    const logs = live.logs;
    if (logs !== undefined) {
      mirrorCounter(
        this.registry,
        'trajwatch_logs_total',
        'OTLP log records by outcome: held (for its span), joined, no-new-facts, span-missing, late, duplicate, not-content-event, no-span-context, refused.',
        ['outcome'],
        () => Object.entries(logs()).map(([outcome, n]) => [{ outcome }, n] as [Record<string, string>, number]),
      );
    }
    const judge = live.judge;
    if (judge !== undefined) {
      mirrorCounter(this.registry, 'trajwatch_windows_total', 'Windows extracted, refused (over a cap) or deferred (over budget), by reason.', ['outcome', 'reason'], () => {
        const s = judge();
        return [[{ outcome: 'extracted', reason: '' }, s.windowsBuilt], ...byReason(s.refused, 'refused'), ...byReason(s.deferred, 'deferred')];
      });
      mirrorCounter(this.registry, 'trajwatch_judge_calls_total', 'Judge requests by outcome: called (paid), replayed from the ledger (free), conflict.', ['outcome'], () => {
        const s = judge();
        return [[{ outcome: 'called' }, s.calls], [{ outcome: 'replayed' }, s.replays], [{ outcome: 'conflict' }, s.conflicts], [{ outcome: 'unresolved-intent' }, s.unresolvedIntents]];
      });
      mirrorCounter(
        this.registry,
        'trajwatch_judge_attempts_total',
        'Physical judge HTTP attempts, retries included, by usage: reported, or unknown (no usage came back; may have been billed, charged to the budget at its ceiling).',
        ['usage'],
        () => {
          const s = judge();
          return [[{ usage: 'reported' }, s.attempts - s.unknownUsageAttempts], [{ usage: 'unknown' }, s.unknownUsageAttempts]];
        },
      );
      mirrorCounter(this.registry, 'trajwatch_judge_failures_total', 'Judge calls that failed (timeout, HTTP error, unparseable answer...), by reason.', ['reason'], () =>
        Object.entries(judge().failures).map(([reason, n]) => [{ reason }, n] as [Record<string, string>, number]),
      );
      mirrorCounter(this.registry, 'trajwatch_redactions_total', 'Secrets redacted from window content before a judge request.', [], () => [[{}, judge().redactions]]);
      mirrorCounter(this.registry, 'trajwatch_ledger_errors_total', 'Decision-ledger writes that failed.', [], () => [[{}, judge().ledgerErrors]]);
      mirrorCounter(this.registry, 'trajwatch_judge_tokens_total', 'Tokens the judge provider reported, by kind (prompt, completion), summed over attempts; attempts without usage add nothing.', ['kind'], () => {
        const { prompt, completion } = judge().tokens;
        return [[{ kind: 'prompt' }, prompt], [{ kind: 'completion' }, completion]];
      });
      mirrorCounter(this.registry, 'trajwatch_judge_cost_usd_total', 'Judge spend in US dollars, from client.pricing; absent while no call was priced in USD (unknown is not zero).', [], () => {
        const usd = judge().cost.USD;
        return usd === undefined ? [] : [[{}, usd]];
      });
      new Gauge({
        name: 'trajwatch_judge_budget_remaining',
        help: 'What is left of each judge budget now: tokens-per-day (tokens), calls-per-minute (calls), queued-windows (windows).',
        labelNames: ['budget'] as const,
        registers: reg,
        collect() {
          for (const [budget, left] of Object.entries(judge().budgetRemaining)) this.set({ budget }, left);
        },
      });
      new Gauge({
        name: 'trajwatch_calibration_certified',
        help: 'Per question: 1 when an installed certificate qualifies it for the configured model and window policy, else 0 (it cannot act).',
        labelNames: ['question'] as const,
        registers: reg,
        collect() {
          for (const [question, ok] of Object.entries(judge().certified)) this.set({ question }, ok ? 1 : 0);
        },
      });
      this.judgeLatency = new Histogram({
        name: 'trajwatch_judge_latency_seconds',
        help: 'Judge call duration (retries and backoff included), by outcome: answered, bad-answer, or the failure kind.',
        labelNames: ['outcome'] as const,
        buckets: JUDGE_LATENCY_BUCKETS,
        registers: reg,
      });
      // Known outcomes start at 0, so rate() sees the first call of each.
      for (const outcome of JUDGE_CALL_OUTCOMES) this.judgeLatency.zero({ outcome });
    }
    const kafka = live.kafka;
    if (kafka !== undefined) {
      mirrorCounter(this.registry, 'trajwatch_kafka_delivered_total', 'Records acknowledged by the Kafka broker.', [], () => [[{}, kafka().delivered]]);
      mirrorCounter(this.registry, 'trajwatch_kafka_produce_errors_total', 'Failed Kafka produce attempts (each is retried from the outbox).', [], () => [[{}, kafka().sendErrors]]);
      mirrorCounter(this.registry, 'trajwatch_kafka_outbox_ack_errors_total', 'Failed attempts to record broker acknowledgements in the outbox (retried; the records are not sent again).', [], () => [[{}, kafka().ackErrors]]);
      mirrorCounter(this.registry, 'trajwatch_kafka_outbox_refused_total', 'Writes the Kafka outbox refused, by reason (full: retried when room frees; too-large: never sendable).', ['reason'], () => {
        const s = kafka();
        return [[{ reason: 'full' }, s.refusedFull], [{ reason: 'too-large' }, s.refusedTooLarge]];
      });
      this.kafkaProduceLatency = new Histogram({
        name: 'trajwatch_kafka_produce_seconds',
        help: 'Duration of acknowledged Kafka produce requests (send to broker acknowledgement, acks=all).',
        buckets: PRODUCE_LATENCY_BUCKETS,
        registers: reg,
      });
      this.kafkaProduceRecords = new Histogram({
        name: 'trajwatch_kafka_produce_records',
        help: 'Records per acknowledged Kafka produce request.',
        buckets: [1, 5, 10, 50, 100, 500, 1000, 5000],
        registers: reg,
      });
      new Gauge({
        name: 'trajwatch_kafka_failing',
        help: '1 from a failed produce attempt until the next success.',
        registers: reg,
        collect() {
          this.set(kafka().failing ? 1 : 0);
        },
      });
    }
    const backlog = live.sinkBacklog;
    if (backlog !== undefined) {
      new Gauge({
        name: 'trajwatch_sink_backlog_records',
        help: 'Records a sink holds that are not yet durable or acknowledged (the outbox depth for Kafka).',
        labelNames: ['sink'] as const,
        registers: reg,
        collect() {
          for (const [sink, b] of Object.entries(backlog())) if (b.records !== undefined) this.set({ sink }, b.records);
        },
      });
      new Gauge({
        name: 'trajwatch_sink_backlog_bytes',
        help: 'Bytes a sink holds that are not yet durable or acknowledged.',
        labelNames: ['sink'] as const,
        registers: reg,
        collect() {
          for (const [sink, b] of Object.entries(backlog())) this.set({ sink }, b.bytes);
        },
      });
    }
  }

  /** Counts one answered OTLP request (the receivers' observer). */
  observeRequest(
    transport: 'http' | 'grpc',
    o: {
      status: number | string;
      contentType: string;
      spans: number;
      rejectedSpans: number;
      reason?: string;
      logRecords?: number;
      rejectedLogRecords?: number;
    },
  ): void {
    const content_type = o.contentType;
    this.requests.inc({ transport, status: String(o.status), content_type });
    if (o.reason !== undefined) this.requestsRefused.inc({ transport, reason: o.reason });
    if (o.spans > 0) this.spansReceived.inc({ transport, content_type }, o.spans);
    if (o.rejectedSpans > 0) this.spansRefused.inc({ transport, content_type }, o.rejectedSpans);
    if (o.logRecords !== undefined && o.logRecords > 0) this.logRecordsReceived.inc({ transport, content_type }, o.logRecords);
    if (o.rejectedLogRecords !== undefined && o.rejectedLogRecords > 0) {
      this.logRecordsRefused.inc({ transport, content_type }, o.rejectedLogRecords);
    }
  }

  /** Times one judge call (the decision points' `onCall` observer). */
  observeJudgeCall(call: JudgeCall): void {
    this.judgeLatency?.observe({ outcome: call.outcome }, call.seconds);
  }

  /** Times one acknowledged Kafka produce request (the Kafka sink's `onProduce` observer). */
  observeKafkaProduce(seconds: number, records: number): void {
    this.kafkaProduceLatency?.observe(seconds);
    this.kafkaProduceRecords?.observe(records);
  }

  /** Counts judged answers and the coordinator alarms among them. */
  observeJudged(findings: readonly Finding[], alarms: readonly Finding[]): void {
    for (const f of findings) {
      const recommendation = f.observation?.kind === 'record' ? f.observation.values.recommendation : undefined;
      const action = (recommendation as { action?: unknown } | undefined)?.action;
      if (typeof action === 'string') this.decisions.inc({ action, question: f.area });
    }
    for (const a of alarms) {
      this.alarms.inc({ question: a.area, service: a.subject.service ?? '', agent: a.subject.agent ?? '' });
    }
  }

  /** Counts what one analysis manifest says: every check's status and every window's fate. */
  observeManifest(m: AnalysisManifest): void {
    for (const c of m.checks) this.checkStatuses.inc({ check: c.check, status: c.status, reason: c.reason ?? '' });
    for (const w of m.windows) this.windowFates.inc({ fate: w.fate, reason: w.reason ?? '' });
  }

  /** Counts one closed trajectory and what the inline analysis found in it. */
  observeTrajectory(t: Trajectory, findings: readonly Finding[]): void {
    this.trajectoriesClosed.inc({ completeness: t.complete ? 'complete' : 'incomplete', closed_by: t.closedBy });
    for (const reason of t.incompleteReasons) this.incompleteReasons.inc({ reason });
    for (const gap of captureGaps(t.steps)) this.captureGaps.inc({ reason: gap.reason });
    this.trajectorySteps.observe(t.steps.length);
    for (const f of findings) {
      this.findings.inc({ analyst: f.analyst_id, severity: f.severity });
      if (f.analyst_id === 'l0') this.l0Hits.inc({ pattern: f.area });
      if (f.analyst_id === 'tool-repetition') this.repetitions.inc();
    }
  }
}
