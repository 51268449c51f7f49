/**
 * The receiver's answers in both OTLP content types: ExportTraceServiceResponse (with an
 * optional partialSuccess) and google.rpc.Status for errors.
 */

import { ProtoWriter } from './proto-writer.ts';

export const PROTOBUF = 'application/x-protobuf';
export const JSON_TYPE = 'application/json';

export type ResponseFormat = 'protobuf' | 'json';

export interface PartialSuccess {
  rejectedSpans: number;
  errorMessage: string;
}

export function exportResponse(format: ResponseFormat, partial?: PartialSuccess): Buffer {
  if (format === 'json') {
    const body =
      partial === undefined
        ? {}
        : { partialSuccess: { rejectedSpans: String(partial.rejectedSpans), errorMessage: partial.errorMessage } };
    return Buffer.from(JSON.stringify(body));
  }
  if (partial === undefined) return Buffer.alloc(0);
  const inner = new ProtoWriter().varintField(1, partial.rejectedSpans).stringField(2, partial.errorMessage);
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
