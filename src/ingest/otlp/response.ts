/**
 * The receiver's answers in both OTLP content types: ExportTraceServiceResponse and
 * ExportLogsServiceResponse (with an optional partialSuccess) and google.rpc.Status for errors.
 */

import { ProtoWriter } from './proto-writer.ts';

export const PROTOBUF = 'application/x-protobuf';
export const JSON_TYPE = 'application/json';

export type ResponseFormat = 'protobuf' | 'json';

export interface PartialSuccess {
  /** Spans (traces) or log records (logs) refused. */
  rejected: number;
  errorMessage: string;
}

/** Which export a response answers; both partial successes have the same field numbers. */
export type Signal = 'traces' | 'logs';

const REJECTED_KEY = { traces: 'rejectedSpans', logs: 'rejectedLogRecords' } as const;

export function exportResponse(format: ResponseFormat, partial?: PartialSuccess, signal: Signal = 'traces'): Buffer {
  if (format === 'json') {
    const body = partial === undefined ? {} : { partialSuccess: { [REJECTED_KEY[signal]]: String(partial.rejected), errorMessage: partial.errorMessage } };
    return Buffer.from(JSON.stringify(body));
  }
  if (partial === undefined) return Buffer.alloc(0);
  const inner = new ProtoWriter().varintField(1, partial.rejected).stringField(2, partial.errorMessage);
  return new ProtoWriter().bytesField(1, inner.finish()).finish();
}

/** google.rpc.Status codes used by the receiver. */
export const RPC_CODE = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export function rpcStatus(format: ResponseFormat, code: number, message: string): Buffer {
  if (format === 'json') return Buffer.from(JSON.stringify({ code, message }));
  return new ProtoWriter().varintField(1, code).stringField(2, message).finish();
}
