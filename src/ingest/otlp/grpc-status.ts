/**
 * How an OTLP/gRPC server tells a throttled client how long to wait (opentelemetry-proto
 * spec, "OTLP/gRPC Throttling"): a google.rpc.RetryInfo. Clients look in two places, so the
 * receiver fills both: the rich status in `grpc-status-details-bin` (Go and Java clients, the
 * Collector) and the bare RetryInfo in `google.rpc.retryinfo-bin` (the Python exporter).
 */
import { rpcStatus } from './response.ts';
import { ProtoWriter } from './proto-writer.ts';

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
  const any = new ProtoWriter().stringField(1, RETRY_INFO_TYPE_URL).bytesField(2, retryInfo(retryDelaySeconds)).finish();
  // Protobuf messages concatenate: Status{code, message} followed by its repeated details field.
  return Buffer.concat([rpcStatus('protobuf', code, message), new ProtoWriter().bytesField(3, any).finish()]);
}

/** Encodes `google.rpc.RetryInfo { retry_delay: Duration { seconds } }`. */
export function retryInfo(retryDelaySeconds: number): Buffer {
  const duration = new ProtoWriter().varintField(1, Math.max(0, Math.floor(retryDelaySeconds))).finish();
  return new ProtoWriter().bytesField(1, duration).finish();
}
