import { Counter } from 'prom-client';
import type { MetricRegistry } from '../../telemetry/metrics.ts';

/** One answered OTLP request as both receivers report it (`RequestObserver`, `GrpcRequestObserver`). */
export interface RequestOutcome {
  status: number | string;
  contentType: string;
  spans: number;
  rejectedSpans: number;
  reason?: string | undefined;
  logRecords?: number | undefined;
  rejectedLogRecords?: number | undefined;
}

export type Transport = 'http' | 'grpc';

/** What the OTLP receivers count per request; a no-op without a registry. */
export interface ReceiverMetrics {
  observe(transport: Transport, outcome: RequestOutcome): void;
}

const OFF: ReceiverMetrics = { observe: () => {} };

/**
 * The OTLP receivers' series (both transports, told apart by `transport`):
 * `trajwatch_otlp_requests_total{transport,status,content_type}`,
 * `trajwatch_otlp_requests_refused_total{transport,reason}`,
 * `trajwatch_spans_received_total` / `_refused_total{transport,content_type}`,
 * `trajwatch_log_records_received_total` / `_refused_total{transport,content_type}`.
 */
export function receiverMetrics(registry: MetricRegistry): ReceiverMetrics {
  if (registry === undefined) return OFF;
  const registers = [registry];
  const requests = new Counter({
    name: 'trajwatch_otlp_requests_total',
    help: 'OTLP export requests answered, by transport, HTTP status and content type.',
    labelNames: ['transport', 'status', 'content_type'] as const,
    registers,
  });
  const requestsRefused = new Counter({
    name: 'trajwatch_otlp_requests_refused_total',
    help: 'OTLP export requests refused whole, by reason (limit, backpressure, bad input).',
    labelNames: ['transport', 'reason'] as const,
    registers,
  });
  const spansReceived = new Counter({
    name: 'trajwatch_spans_received_total',
    help: 'Spans decoded and accepted into the assembler, by transport and content type.',
    labelNames: ['transport', 'content_type'] as const,
    registers,
  });
  const spansRefused = new Counter({
    name: 'trajwatch_spans_refused_total',
    help: 'Spans refused and reported to the sender (partial success), by transport and content type.',
    labelNames: ['transport', 'content_type'] as const,
    registers,
  });
  const logRecordsReceived = new Counter({
    name: 'trajwatch_log_records_received_total',
    help: 'OTLP log records decoded and accepted, by transport and content type (what became of them: trajwatch_logs_total).',
    labelNames: ['transport', 'content_type'] as const,
    registers,
  });
  const logRecordsRefused = new Counter({
    name: 'trajwatch_log_records_refused_total',
    help: 'OTLP log records reported refused to the sender (partial success: malformed ids, content events naming no span).',
    labelNames: ['transport', 'content_type'] as const,
    registers,
  });
  return {
    observe(transport, o) {
      const content_type = o.contentType;
      requests.inc({ transport, status: String(o.status), content_type });
      if (o.reason !== undefined) requestsRefused.inc({ transport, reason: o.reason });
      if (o.spans > 0) spansReceived.inc({ transport, content_type }, o.spans);
      if (o.rejectedSpans > 0) spansRefused.inc({ transport, content_type }, o.rejectedSpans);
      if (o.logRecords !== undefined && o.logRecords > 0) logRecordsReceived.inc({ transport, content_type }, o.logRecords);
      if (o.rejectedLogRecords !== undefined && o.rejectedLogRecords > 0) logRecordsRefused.inc({ transport, content_type }, o.rejectedLogRecords);
    },
  };
}
