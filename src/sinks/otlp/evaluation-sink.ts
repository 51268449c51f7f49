import { ROOT_CONTEXT, trace, TraceFlags, type HrTime } from '@opentelemetry/api';
import type { SeverityNumber } from '@opentelemetry/api-logs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, type LogRecordProcessor, type ReadableLogRecord, type SdkLogRecord } from '@opentelemetry/sdk-logs';
import { StorageError, UpstreamError } from '../../errors.ts';
import { AudienceError } from '../../findings/audience.ts';
import type { Finding } from '../../findings/schema.ts';
import type { MetricRegistry } from '../../telemetry/metrics.ts';
import { AudienceRefusals } from '../audience-refusals.ts';
import type { FindingSink, FindingStream } from '../finding-sink.ts';
import type { SinkRecord } from '../record.ts';
import type { LevelLog } from '../../telemetry/logger.ts';
import type { OtlpEvaluationConfig } from './config.ts';
import { openDurableQueue, type DurableQueue } from './durable-queue.ts';
import { EVALUATION_EVENT_NAME, evaluationEvent, type EvaluationEvent } from './evaluation-event.ts';
import { registerOtlpEvaluationMetrics } from './metrics.ts';
import { REFUSAL } from '../../ingest/refusal.ts';

export interface OtlpEvaluationSinkOptions {
  /** The outbox directory, e.g. `<dataDir>/outbox/otlp-evaluations`. */
  outboxDir: string;
  log?: LevelLog;
  metrics?: MetricRegistry;
  /** Where a finding whose external view cannot be trusted goes (kept whole, counted); the process's one. */
  refusals?: AudienceRefusals;
}

const SCOPE = 'trajwatch.evaluations';

/** Hands each record the SDK builds back to the sink, which exports it itself to see the outcome. */
class Capture implements LogRecordProcessor {
  records: ReadableLogRecord[] = [];
  onEmit(record: SdkLogRecord): void {
    this.records.push(record);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/**
 * Findings as OpenTelemetry evaluation events: each finding becomes a `gen_ai.evaluation.result`
 * log record (see `evaluation-event.ts`), made durable in its own outbox first, then exported
 * with the OpenTelemetry JS logs SDK's OTLP/HTTP exporter and removed from the outbox only once
 * the receiver acknowledged the request (at-least-once; consumers dedupe by
 * `trajwatch.finding_id`). Bounded like the Kafka sink: a full outbox is backpressure, nothing
 * is dropped. The SDK's own batch processor is not used: it drops on a full queue and does not
 * say whether an export succeeded; here each export's result decides the acknowledgement.
 */
export class OtlpEvaluationSink implements FindingSink {
  readonly name = 'otlp-evaluations';
  readonly config: OtlpEvaluationConfig;
  readonly #queue: DurableQueue;
  readonly #exporter: OTLPLogExporter;
  readonly #provider: LoggerProvider;
  readonly #capture = new Capture();
  readonly #log: LevelLog;
  readonly #refusals: AudienceRefusals;
  #overflow: SinkRecord[] = [];
  #draining: Promise<void> | undefined;
  #closed = false;
  #stopped = false;
  #refusedAfterClose = 0;
  #loop: Promise<void> = Promise.resolve();
  #deliveredThrough = -1;
  /** Exported, not yet acknowledged in the outbox (retried before the next export). */
  #unrecorded: number[] = [];
  #wake: (() => void) | undefined;
  #listeners = new Set<() => void>();
  #stats = { exported: 0, exportErrors: 0, refusedTooLarge: 0, refusedAudience: 0, failing: false, lastError: undefined as string | undefined };

  private constructor(config: OtlpEvaluationConfig, queue: DurableQueue, log: LevelLog, refusals: AudienceRefusals) {
    this.config = config;
    this.#queue = queue;
    this.#log = log;
    this.#refusals = refusals;
    this.#exporter = new OTLPLogExporter({ url: config.endpoint, headers: config.headers, timeoutMillis: config.timeoutMs, concurrencyLimit: 1 });
    this.#provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': config.serviceName }),
      processors: [this.#capture],
    });
  }

  /** Opens the outbox (what an earlier run left is exported first) and starts exporting. */
  static async open(config: OtlpEvaluationConfig, options: OtlpEvaluationSinkOptions): Promise<OtlpEvaluationSink> {
    const queue = await openDurableQueue(options.outboxDir, {
      maxOutboxBytes: config.maxOutboxBytes,
      maxOutboxRecords: config.maxOutboxRecords,
      maxRecordBytes: config.maxRecordBytes,
      segmentBytes: config.outboxSegmentBytes,
    });
    const sink = new OtlpEvaluationSink(config, queue, options.log ?? (() => {}), options.refusals ?? new AudienceRefusals());
    registerOtlpEvaluationMetrics(options.metrics, () => {
      const s = sink.stats();
      return { ...s, backlogRecords: sink.backlog().records };
    });
    sink.#loop = sink.#deliver();
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
    const q = this.#queue.stats();
    return { ...this.#stats, refusedFull: q.refusedFull, refusedTooLarge: this.#stats.refusedTooLarge + q.refusedTooLarge };
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
        this.#stats.refusedAudience += 1;
        this.#refusals.refuse(this.name, stream, f, err);
        return [];
      }
      return [{ topic: stream, key: f.subject.trajectory_key, id: f.finding_id, value: JSON.stringify(event), headers: {} }];
    });
    if (records.length === 0) return;
    if (this.#closed) {
      this.#refusedAfterClose += records.length;
      return;
    }
    if (this.#overflow.length === 0 && this.#queue.append(records).ok) {
      this.#wake?.();
      return;
    }
    this.#overflow.push(...records);
    this.#draining ??= this.#drain();
  }

  backpressure(): string | undefined {
    if (this.#closed) return REFUSAL.otlpEvaluationsClosed;
    if (this.#queue.failure !== undefined) return REFUSAL.otlpOutboxUnwritable;
    if (this.#overflow.length > 0 || !this.#queue.hasRoomFor()) return REFUSAL.otlpOutboxFull;
    return undefined;
  }

  /** Not yet acknowledged by the receiver: in the outbox, or waiting for room in it. */
  backlog(): { records: number; bytes: number } {
    const q = this.#queue.stats();
    const done = this.#queue.pendingAmong(this.#unrecorded);
    const overflowBytes = this.#overflow.reduce((sum, r) => sum + Buffer.byteLength(r.value), 0);
    return { records: q.pendingRecords - done.records + this.#overflow.length, bytes: q.pendingBytes - done.bytes + overflowBytes };
  }

  async flushed(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
    const last = this.#queue.nextSeq - 1;
    while (!this.#stopped && this.#deliveredThrough < last) {
      const pending = this.#queue.oldestPendingSeqAfter(this.#deliveredThrough);
      if (pending === undefined || pending > last) break;
      await this.#next();
    }
    if (this.#refusedAfterClose > 0) {
      throw new StorageError(`otlp evaluation sink closed: ${this.#refusedAfterClose} record(s) written after close were not exported`);
    }
  }

  /** Exports for at most `closeTimeoutMs`; what is left stays in the outbox for the next run. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await withTimeout(this.flushed().catch(() => undefined), this.config.closeTimeoutMs);
    this.#stopped = true;
    this.#wake?.();
    this.#notify();
    await withTimeout(this.#loop, 2_000);
    await this.#exporter.shutdown().catch(() => undefined);
    await this.#provider.shutdown().catch(() => undefined);
    const left = this.#overflow.length;
    await this.#queue.close();
    const pending = this.#queue.stats().pendingRecords;
    if (left > 0 || pending > 0) this.#log(left > 0 ? 'error' : 'warn', 'closed with evaluation events not exported', { leftInOutbox: pending, neverWritten: left });
  }

  async #drain(): Promise<void> {
    while (this.#overflow.length > 0 && !this.#stopped) {
      const result = this.#queue.append([this.#overflow[0]!]);
      if (result.ok) {
        this.#overflow.shift();
        this.#wake?.();
      } else if (result.reason === 'too-large') {
        this.#stats.refusedTooLarge += 1;
        this.#log('error', 'evaluation event larger than maxRecordBytes not exported', { finding_id: result.id, bytes: result.bytes });
        this.#overflow.shift();
      } else if (result.reason === 'closed') {
        break;
      } else {
        await Promise.race([this.#next(), new Promise((r) => setTimeout(r, 250))]);
      }
    }
    this.#draining = undefined;
  }

  async #deliver(): Promise<void> {
    let delayMs = this.config.retryInitialMs;
    while (!this.#stopped) {
      try {
        if (this.#unrecorded.length > 0) {
          await this.#queue.ack(this.#unrecorded);
          this.#unrecorded = [];
          this.#notify();
        }
        const entries = await this.#queue.peek(this.config.batchSize, this.config.maxBatchBytes, this.#deliveredThrough);
        if (entries.length === 0) {
          await this.#waitForWork();
          continue;
        }
        await this.#export(entries.map((e) => JSON.parse(e.record.value) as EvaluationEvent));
        this.#stats.exported += entries.length;
        this.#deliveredThrough = entries.at(-1)!.seq;
        this.#unrecorded.push(...entries.map((e) => e.seq));
        await this.#queue.ack(this.#unrecorded);
        this.#unrecorded = [];
        if (this.#stats.failing) {
          this.#stats.failing = false;
          this.#log('info', 'otlp evaluation export recovered', { exportErrors: this.#stats.exportErrors });
        }
        delayMs = this.config.retryInitialMs;
        this.#notify();
      } catch (err) {
        if (this.#stopped) break;
        this.#stats.exportErrors += 1;
        this.#stats.lastError = err instanceof Error ? err.message : String(err);
        if (!this.#stats.failing) {
          this.#stats.failing = true;
          this.#log('warn', 'otlp evaluation export failing; events wait in the outbox and are retried', { error: this.#stats.lastError });
        }
        this.#notify();
        await this.#sleep(delayMs);
        delayMs = Math.min(delayMs * 2, this.config.retryMaxMs);
      }
    }
  }

  /** Builds the records with the SDK's logger (resource, scope, trace context) and exports them in one request. */
  async #export(events: readonly EvaluationEvent[]): Promise<void> {
    const logger = this.#provider.getLogger(SCOPE);
    this.#capture.records = [];
    for (const e of events) {
      const context = e.parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { ...e.parent, traceFlags: TraceFlags.SAMPLED, isRemote: true });
      logger.emit({
        eventName: EVALUATION_EVENT_NAME,
        ...(e.observedAt === null ? {} : { timestamp: isoToHrTime(e.observedAt) }),
        severityNumber: e.severityNumber as SeverityNumber,
        severityText: e.severityText,
        body: e.body,
        attributes: e.attributes,
        context,
      });
    }
    const records = this.#capture.records;
    this.#capture.records = [];
    const result = await new Promise<ExportResult>((resolve) => this.#exporter.export(records, resolve));
    if (result.code !== ExportResultCode.SUCCESS) {
      throw new UpstreamError(`OTLP export to ${this.config.endpoint} failed: ${result.error?.message ?? 'unknown error'}`);
    }
  }

  #waitForWork(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = () => {
        this.#wake = undefined;
        resolve();
      };
      if (this.#stopped || this.#queue.oldestPendingSeqAfter(this.#deliveredThrough) !== undefined) this.#wake();
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, ms);
      this.#wake = () => {
        if (!this.#stopped) return;
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
    });
  }

  #next(): Promise<void> {
    return new Promise((resolve) => {
      const l = (): void => {
        this.#listeners.delete(l);
        resolve();
      };
      this.#listeners.add(l);
    });
  }

  #notify(): void {
    for (const l of [...this.#listeners]) l();
  }
}

/** `2026-01-01T00:00:00.123456789Z` → [seconds, nanoseconds], keeping all nine digits. */
export function isoToHrTime(iso: string): HrTime {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(iso);
  if (m === null) throw new UpstreamError(`not an ISO-8601 UTC time: ${iso}`);
  const seconds = Math.floor(Date.parse(`${m[1]}Z`) / 1000);
  return [seconds, Number((m[2] ?? '').padEnd(9, '0'))];
}

function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}
