/**
 * How an OTLP/gRPC server tells a throttled client how long to wait (opentelemetry-proto
 * spec, "OTLP/gRPC Throttling"): a google.rpc.RetryInfo. Clients look in two places, so the
 * receiver fills both: the rich status in `grpc-status-details-bin` (Go and Java clients, the
 * Collector) and the bare RetryInfo in `google.rpc.retryinfo-bin` (the Python exporter).
 */
import { rpcStatus } from './otlp-response.ts';

/** The trailer key gRPC libraries read rich status details from. */
export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

/** The trailer key the Python OTLP exporter reads a bare RetryInfo from. */
export const RETRY_INFO_KEY = 'google.rpc.retryinfo-bin';

const RETRY_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.RetryInfo';

/**
 * Encodes `google.rpc.Status { code, message, details: [Any(RetryInfo { retry_delay })] }`.
 *
 * @example
 * metadata.set(STATUS_DETAILS_KEY, statusWithRetryInfo(14, 'busy', 2));
 */
export function statusWithRetryInfo(code: number, message: string, retryDelaySeconds: number): Buffer {
  const any = Buffer.concat([
    field(1, Buffer.from(RETRY_INFO_TYPE_URL, 'utf8'), 'bytes'),
    field(2, retryInfo(retryDelaySeconds), 'bytes'),
  ]);
  // Protobuf messages concatenate: Status{code, message} followed by its repeated details field.
  return Buffer.concat([rpcStatus('protobuf', code, message), field(3, any, 'bytes')]);
}

/** Encodes `google.rpc.RetryInfo { retry_delay: Duration { seconds } }`. */
export function retryInfo(retryDelaySeconds: number): Buffer {
  const duration = field(1, varintBytes(Math.max(0, Math.floor(retryDelaySeconds))), 'varint');
  return field(1, duration, 'bytes');
}

function field(number: number, payload: Buffer, wire: 'varint' | 'bytes'): Buffer {
  if (wire === 'varint') return Buffer.concat([varintBytes(number << 3), payload]);
  return Buffer.concat([varintBytes((number << 3) | 2), varintBytes(payload.length), payload]);
}

function varintBytes(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v > 0x7f) {
    bytes.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}
