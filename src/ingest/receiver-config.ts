import { z } from 'zod';
import { HostPortSchema } from '../config/host-port.ts';
import { ReceiverAuthSchema } from './auth.ts';

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
  maxBytes: z.number().int().min(1024).default(512 * 1024 * 1024),
  /** Size at which a segment file is closed and a new one started; whole segments are deleted once finished. */
  segmentBytes: z.number().int().min(1024).default(16 * 1024 * 1024),
});

export type WalConfig = z.infer<typeof WalConfigSchema>;

export const ReceiverConfigSchema = z
  .object({
    /** Where the OTLP/HTTP receiver listens. Loopback by default: binding wider is explicit. */
    otlpHttp: HostPortSchema.prefault('127.0.0.1:4318'),
    /** Where the OTLP/gRPC receiver listens (the default transport of the Python, Go and Java SDKs). */
    otlpGrpc: HostPortSchema.prefault('127.0.0.1:4317'),
    /** Cap on the request body as sent (compressed or not); 413 above it. */
    maxBodyBytes: z.number().int().min(1).default(16 * 1024 * 1024),
    /** Cap on the body after gzip decompression (the spec recommends 64 MiB); 413 above it. */
    maxDecompressedBytes: z.number().int().min(1).default(64 * 1024 * 1024),
    /** Sent with 429/503 answers. */
    retryAfterSeconds: z.number().int().min(1).default(2),
    /** Token required on `/v1/traces`, `/v1/logs`, `/metrics` and both gRPC Exports (401 / UNAUTHENTICATED without); `/healthz` stays open. */
    auth: ReceiverAuthSchema.optional(),
    /** Serve HTTPS instead of HTTP, and gRPC over TLS instead of plaintext (one certificate for both). */
    tls: ReceiverTlsSchema.optional(),
    wal: WalConfigSchema.prefault({}),
  })
  .strict();

export type ReceiverConfig = z.infer<typeof ReceiverConfigSchema>;
