import { AudienceError } from '../../findings/audience.ts';
import type { Finding } from '../../findings/schema.ts';
import { Outbox } from '../../storage/outbox.ts';
import type { MetricRegistry } from '../../telemetry/metrics.ts';
import { AudienceRefusals } from '../audience-refusals.ts';
import { DeliveryEngine } from '../delivery/engine.ts';
import { OutboxFindingSink, type OverflowWording } from '../delivery/outbox-finding-sink.ts';
import type { FindingStream } from '../finding-sink.ts';
import { SINK_RECORD_SHAPE, type SinkRecord } from '../record.ts';
import type { OtlpEvaluationConfig } from './config.ts';
import { evaluationEvent, type EvaluationEvent } from './evaluation-event.ts';
import { registerOtlpEvaluationMetrics } from './metrics.ts';
import { OtlpLogTransport } from './transport.ts';
import type { LevelLog } from '../../telemetry/logger.ts';
import { REFUSAL } from '../../ingest/refusal.ts';

export { isoToHrTime } from './transport.ts';

export interface OtlpEvaluationSinkOptions {
  /** The outbox directory, e.g. `<dataDir>/outbox/otlp-evaluations`. */
  outboxDir: string;
  log?: LevelLog;
  metrics?: MetricRegistry;
  /** Where a finding whose external view cannot be trusted goes (kept whole, counted); the process's one. */
  refusals?: AudienceRefusals;
}

const WORDING: OverflowWording = {
  closed: REFUSAL.otlpEvaluationsClosed,
  unwritable: REFUSAL.otlpOutboxUnwritable,
  full: REFUSAL.otlpOutboxFull,
  sink: 'otlp evaluation sink',
  record: 'evaluation event',
  sent: 'exported',
  closedUndelivered: 'closed with evaluation events not exported',
};

/**
 * Findings as OpenTelemetry evaluation events: each finding becomes a `gen_ai.evaluation.result`
 * log record (see `evaluation-event.ts`), made durable in its own outbox first, then exported
 * over OTLP/HTTP (`transport.ts`) by the {@link DeliveryEngine} the Kafka sink uses too, and
 * removed from the outbox only once the receiver acknowledged the request (at-least-once;
 * consumers dedupe by `trajwatch.finding_id`). A full outbox is backpressure, nothing is dropped.
 */
export class OtlpEvaluationSink extends OutboxFindingSink {
  readonly name = 'otlp-evaluations';
  readonly config: OtlpEvaluationConfig;
  readonly #refusals: AudienceRefusals;
  #refusedAudience = 0;

  private constructor(config: OtlpEvaluationConfig, outbox: Outbox<SinkRecord>, log: LevelLog, refusals: AudienceRefusals) {
    const transport = new OtlpLogTransport(config);
    const names = { delivery: 'otlp evaluation export', outbox: 'otlp outbox' };
    super(new DeliveryEngine({ outbox, transport, config, log, names }), { log, wording: WORDING, closeTimeoutMs: config.closeTimeoutMs });
    this.config = config;
    this.#refusals = refusals;
  }

  /** Opens the outbox (what an earlier run left is exported first) and starts exporting. */
  static async open(config: OtlpEvaluationConfig, options: OtlpEvaluationSinkOptions): Promise<OtlpEvaluationSink> {
    const outbox = await Outbox.open(options.outboxDir, SINK_RECORD_SHAPE, {
      maxOutboxBytes: config.maxOutboxBytes,
      maxOutboxRecords: config.maxOutboxRecords,
      maxRecordBytes: config.maxRecordBytes,
      segmentBytes: config.outboxSegmentBytes,
    });
    const sink = new OtlpEvaluationSink(config, outbox, options.log ?? (() => {}), options.refusals ?? new AudienceRefusals());
    registerOtlpEvaluationMetrics(options.metrics, () => {
      const s = sink.stats();
      return { ...s, backlogRecords: sink.backlog().records };
    });
    return sink;
  }

  stats(): {
    exported: number;
    exportErrors: number;
    refusedFull: number;
    refusedTooLarge: number;
    refusedAudience: number;
    failing: boolean;
    lastError: string | undefined;
  } {
    const s = this.engine.stats();
    return {
      exported: s.delivered,
      exportErrors: s.sendErrors,
      refusedFull: s.refusedFull,
      refusedTooLarge: this.refusedTooLarge + s.refusedTooLarge,
      refusedAudience: this.#refusedAudience,
      failing: s.failing,
      lastError: s.lastError,
    };
  }

  write(findings: readonly Finding[], stream: FindingStream): void {
    if (findings.length === 0) return;
    const records = findings.flatMap((f): SinkRecord[] => {
      let event: EvaluationEvent;
      try {
        event = evaluationEvent(f, stream, this.config.audience);
      } catch (err) {
        // As the audience decorator does: never export what could not be stripped; keep it
        // whole in the quarantine log, count it, and carry on (not backpressure).
        if (!(err instanceof AudienceError)) throw err;
        this.#refusedAudience += 1;
        this.#refusals.refuse(this.name, stream, f, err);
        return [];
      }
      return [{ topic: stream, key: f.subject.trajectory_key, id: f.finding_id, value: JSON.stringify(event), headers: {} }];
    });
    if (records.length > 0) this.offer(records);
  }
}
