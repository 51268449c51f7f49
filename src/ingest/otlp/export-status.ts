/**
 * One map from what became of an OTLP export to its answer on either transport, so the HTTP
 * and gRPC receivers cannot drift apart (the Collector's
 * `receiver/otlpreceiver/internal/errors/errors.go`). The HTTP body's `google.rpc.Status`
 * carries the same gRPC code the gRPC receiver answers with.
 *
 * | outcome | gRPC | HTTP | client retries |
 * |---|---|---|---|
 * | accepted (maybe partially) | OK | 200 | no |
 * | unauthenticated | UNAUTHENTICATED | 401 | no |
 * | undecodable | INVALID_ARGUMENT | 400 | no |
 * | too large (body or decompressed) | RESOURCE_EXHAUSTED, no RetryInfo | 413 | no |
 * | refused at a memory bound | RESOURCE_EXHAUSTED + RetryInfo | 503 + Retry-After | yes |
 * | refused otherwise (sink, log behind or failing) | UNAVAILABLE + RetryInfo | 503 + Retry-After | yes |
 * | a signal this receiver does not take (logs without a logs target) | UNIMPLEMENTED | 404 | no |
 * | internal error (a bug) | INTERNAL | 500 | no |
 *
 * Every throttle is HTTP 503 (OTLP/HTTP clients retry 429 and 503 alike, and 503 is what the
 * receiver has always answered); gRPC tells the memory bounds apart because OTLP/gRPC clients
 * retry RESOURCE_EXHAUSTED only when it carries RetryInfo, which a throttle always does.
 * Too large over gRPC is grpc-js's own answer (it stops inflating at the limit, before any
 * handler runs); the map states it so HTTP agrees.
 */
import { RPC_CODE } from './response.ts';
import { MEMORY_BOUND_REFUSALS } from '../refusal.ts';

export type ExportOutcome =
  | { kind: 'accepted' }
  | { kind: 'unauthenticated' }
  | { kind: 'undecodable' }
  | { kind: 'too-large' }
  /** `reason`: the admission or durability refusal (`max-open-trajectories`, `wal-full`...). */
  | { kind: 'refused'; reason: string }
  /** A signal the target does not take: grpc-js answers UNIMPLEMENTED for a method not served. */
  | { kind: 'not-served' }
  | { kind: 'internal' };

export interface ExportStatus {
  /** The gRPC status code, also the `code` of the HTTP body's google.rpc.Status. */
  grpcCode: number;
  httpStatus: number;
  /** Sent with a retry delay (HTTP `Retry-After`, gRPC RetryInfo): the client retries. */
  retry: boolean;
}

/** gRPC OK and INTERNAL (otlp-response's RPC_CODE lists the codes of error bodies). */
const OK = 0;
const INTERNAL = 13;

// The memory bounds (the assembler's, and the receivers' in-flight body budget): refusing for
// them is RESOURCE_EXHAUSTED; every other refusal is UNAVAILABLE, the spec's backpressure code.
export { MEMORY_BOUND_REFUSALS } from '../refusal.ts';

/** The answer to `outcome` on both transports. */
export function exportStatus(outcome: ExportOutcome): ExportStatus {
  switch (outcome.kind) {
    case 'accepted':
      return { grpcCode: OK, httpStatus: 200, retry: false };
    case 'unauthenticated':
      return { grpcCode: RPC_CODE.UNAUTHENTICATED, httpStatus: 401, retry: false };
    case 'undecodable':
      return { grpcCode: RPC_CODE.INVALID_ARGUMENT, httpStatus: 400, retry: false };
    case 'too-large':
      return { grpcCode: RPC_CODE.RESOURCE_EXHAUSTED, httpStatus: 413, retry: false };
    case 'refused':
      return {
        grpcCode: MEMORY_BOUND_REFUSALS.has(outcome.reason) ? RPC_CODE.RESOURCE_EXHAUSTED : RPC_CODE.UNAVAILABLE,
        httpStatus: 503,
        retry: true,
      };
    case 'not-served':
      return { grpcCode: RPC_CODE.UNIMPLEMENTED, httpStatus: 404, retry: false };
    case 'internal':
      return { grpcCode: INTERNAL, httpStatus: 500, retry: false };
  }
}
