import { z } from 'zod';
import { HostPortSchema } from '../../config/host-port.ts';
import { ReceiverAuthSchema } from './auth.ts';
import { intKey } from '../../config/int-key.ts';

/** PEM files for serving both receivers over TLS: OTLP/HTTP (and `/metrics`, `/healthz`) as HTTPS, OTLP/gRPC as gRPC over TLS. */
export const ReceiverTlsSchema = z.strictObject({
  certFile: z.string().min(1),
  keyFile: z.string().min(1),
});

export type ReceiverTls = z.infer<typeof ReceiverTlsSchema>;

/** The write-ahead log of acknowledged requests under `<dataDir>/wal` (a SIGKILL loses nothing acknowledged). */
export const WalConfigSchema = z.strictObject({
  /** Off: requests are acknowledged as soon as they are decoded, and open trajectories die with the process. */
  enabled: z.boolean().default(true),
  /** Bytes the log may hold (requests of trajectories not yet finished); above it new requests get 503 (wal-full). */
  maxBytes: intKey(1024, 512 * 1024 * 1024),
  /** Size at which a segment file is closed and a new one started; whole segments are deleted once finished. */
  segmentBytes: intKey(1024, 16 * 1024 * 1024),
});

export type WalConfig = z.infer<typeof WalConfigSchema>;

export const ReceiverConfigSchema = z
  .object({
    /** Where the OTLP/HTTP receiver listens. Loopback by default: binding wider is explicit. */
    otlpHttp: HostPortSchema.prefault('127.0.0.1:4318'),
    /** Where the OTLP/gRPC receiver listens (the default transport of the Python, Go and Java SDKs). */
    otlpGrpc: HostPortSchema.prefault('127.0.0.1:4317'),
    /** Cap on the request body as sent (compressed or not); 413 above it. */
    maxBodyBytes: intKey(1, 16 * 1024 * 1024),
    /** Cap on the body after gzip decompression (the spec recommends 64 MiB); 413 above it. */
    maxDecompressedBytes: intKey(1, 64 * 1024 * 1024),
    /**
     * Memory budget for request bodies in flight over both receivers together: bytes received
     * plus bytes inflated, charged as they arrive (`inflight-budget.ts`). A request whose next
     * bytes would pass it is answered 503 / RESOURCE_EXHAUSTED + retry delay (`max-inflight-bytes`).
     * At least `maxBodyBytes + maxDecompressedBytes`, so the largest request allowed fits alone.
     */
    maxInflightBytes: intKey(1, 256 * 1024 * 1024),
    /** Connections open at once, per listener (HTTP, gRPC); a connection past it is closed at accept, counted and logged. */
    maxConnections: intKey(1, 4_096),
    /**
     * An idle connection (no request in progress) is closed after this long: HTTP keep-alive
     * (announced as `Keep-Alive: timeout=`, closed `keepAliveGraceMs` later), gRPC
     * `max_connection_idle`. Longer than the idle timeout of common client pools, so the client
     * lets a connection go before the server does.
     */
    idleTimeoutMs: intKey(1_000, 65_000),
    /** How much later than announced an idle HTTP connection is closed, so a client reusing it at the announced limit still gets an answer. */
    keepAliveGraceMs: intKey(0, 5_000),
    /** An HTTP request must have sent its headers within this long of its first byte; else 408 and the connection is closed. */
    headersTimeoutMs: intKey(1_000, 30_000),
    /** An HTTP request must have been received whole (headers and body) within this long; else 408 and the connection is closed. */
    requestTimeoutMs: intKey(1_000, 60_000),
    /** How often the HTTP server checks `headersTimeoutMs` and `requestTimeoutMs` (Node's `connectionsCheckingInterval`). */
    timeoutCheckIntervalMs: intKey(100, 1_000),
    /** A gRPC connection is asked to go away (GOAWAY) after this long, and cut `maxConnectionAgeGraceMs` later: connections are rebalanced and none lives forever. */
    maxConnectionAgeMs: intKey(1_000, 30 * 60_000),
    /** How long calls in flight on an aged gRPC connection may finish. */
    maxConnectionAgeGraceMs: intKey(0, 60_000),
    /** Interval of the server's gRPC keepalive pings; a peer not answering within `keepaliveTimeoutMs` is cut. */
    keepaliveTimeMs: intKey(1_000, 2 * 60 * 60_000),
    keepaliveTimeoutMs: intKey(1_000, 20_000),
    /** Sent with 429/503 answers. */
    retryAfterSeconds: intKey(1, 2),
    /** Token required on `/v1/traces`, `/v1/logs`, `/metrics` and both gRPC Exports (401 / UNAUTHENTICATED without); `/healthz` stays open. */
    auth: ReceiverAuthSchema.optional(),
    /** Serve HTTPS instead of HTTP, and gRPC over TLS instead of plaintext (one certificate for both). */
    tls: ReceiverTlsSchema.optional(),
    wal: WalConfigSchema.prefault({}),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.maxInflightBytes < c.maxBodyBytes + c.maxDecompressedBytes) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxInflightBytes'],
        message: `maxInflightBytes (${c.maxInflightBytes}) must be at least maxBodyBytes + maxDecompressedBytes (${c.maxBodyBytes + c.maxDecompressedBytes}), or the largest request allowed could never be taken`,
      });
    }
    if (c.headersTimeoutMs > c.requestTimeoutMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['headersTimeoutMs'],
        message: `headersTimeoutMs (${c.headersTimeoutMs}) must not exceed requestTimeoutMs (${c.requestTimeoutMs})`,
      });
    }
  });

export type ReceiverConfig = z.infer<typeof ReceiverConfigSchema>;
