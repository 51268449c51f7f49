import { counter, type MetricRegistry } from '../../telemetry/metrics.ts';

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
  const requests = counter(registry, 'trajwatch_otlp_requests_total', 'OTLP export requests answered, by transport, HTTP status and content type.', [
    'transport',
    'status',
    'content_type',
  ]);
  const requestsRefused = counter(
    registry,
    'trajwatch_otlp_requests_refused_total',
    'OTLP export requests refused whole, by reason (limit, backpressure, bad input).',
    ['transport', 'reason'],
  );
  const byContentType = (name: string, help: string) => counter(registry, name, help, ['transport', 'content_type']);
  const spansReceived = byContentType('trajwatch_spans_received_total', 'Spans decoded and accepted into the assembler, by transport and content type.');
  const spansRefused = byContentType(
    'trajwatch_spans_refused_total',
    'Spans refused and reported to the sender (partial success), by transport and content type.',
  );
  const logRecordsReceived = byContentType(
    'trajwatch_log_records_received_total',
    'OTLP log records decoded and accepted, by transport and content type (what became of them: trajwatch_logs_total).',
  );
  const logRecordsRefused = byContentType(
    'trajwatch_log_records_refused_total',
    'OTLP log records reported refused to the sender (partial success: malformed ids, content events naming no span).',
  );
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
