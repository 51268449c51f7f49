import { ROOT_CONTEXT, trace, TraceFlags, type HrTime } from '@opentelemetry/api';
import type { SeverityNumber } from '@opentelemetry/api-logs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, type LogRecordProcessor, type ReadableLogRecord, type SdkLogRecord } from '@opentelemetry/sdk-logs';
import { UpstreamError } from '../../errors.ts';
import type { OutboxEntry } from '../../storage/outbox.ts';
import type { DeliveryTransport } from '../delivery/transport.ts';
import type { SinkRecord } from '../record.ts';
import type { OtlpEvaluationConfig } from './config.ts';
import { EVALUATION_EVENT_NAME, type EvaluationEvent } from './evaluation-event.ts';

const SCOPE = 'trajwatch.evaluations';

/** Hands each record the SDK builds back to the transport, which exports it itself to see the outcome. */
class Capture implements LogRecordProcessor {
  records: ReadableLogRecord[] = [];
  onEmit(record: SdkLogRecord): void {
    this.records.push(record);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/**
 * The evaluation-event sink's transport: the records of a batch built with the OpenTelemetry
 * JS logs SDK's logger (resource, scope, trace context) and exported in one request with its
 * OTLP/HTTP exporter. The SDK's own batch processor is not used: it drops on a full queue and
 * does not say whether an export succeeded; here each export's result decides the
 * acknowledgement.
 */
export class OtlpLogTransport implements DeliveryTransport<SinkRecord> {
  readonly #endpoint: string;
  readonly #exporter: OTLPLogExporter;
  readonly #provider: LoggerProvider;
  readonly #capture = new Capture();

  constructor(config: OtlpEvaluationConfig) {
    this.#endpoint = config.endpoint;
    this.#exporter = new OTLPLogExporter({ url: config.endpoint, headers: config.headers, timeoutMillis: config.timeoutMs, concurrencyLimit: 1 });
    this.#provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': config.serviceName }),
      processors: [this.#capture],
    });
  }

  async send(entries: readonly OutboxEntry<SinkRecord>[]): Promise<void> {
    const logger = this.#provider.getLogger(SCOPE);
    this.#capture.records = [];
    for (const { record } of entries) {
      const e = JSON.parse(record.value) as EvaluationEvent;
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
      const status = (result.error as { code?: unknown } | undefined)?.code;
      throw new UpstreamError(`OTLP export to ${this.#endpoint} failed: ${result.error?.message ?? 'unknown error'}`, {
        cause: result.error,
        retriable: typeof status !== 'number' || !isPermanentStatus(status),
        context: typeof status === 'number' ? { status } : {},
      });
    }
  }

  /** A receiver's 4xx (but 408 and 429) will not pass by itself; no answer, a timeout or a 5xx may. */
  isRetryable(err: unknown): boolean {
    return !(err instanceof UpstreamError) || err.retriable;
  }

  async close(): Promise<void> {
    await this.#exporter.shutdown().catch(() => undefined);
    await this.#provider.shutdown().catch(() => undefined);
  }
}

function isPermanentStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** `2026-01-01T00:00:00.123456789Z` → [seconds, nanoseconds], keeping all nine digits. */
export function isoToHrTime(iso: string): HrTime {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(iso);
  if (m === null) throw new UpstreamError(`not an ISO-8601 UTC time: ${iso}`);
  const seconds = Math.floor(Date.parse(`${m[1]}Z`) / 1000);
  return [seconds, Number((m[2] ?? '').padEnd(9, '0'))];
}
