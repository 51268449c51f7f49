import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { bindGrpcReceiver, closeGrpcReceiver, createGrpcReceiver, LOGS_EXPORT_PATH, TRACE_EXPORT_PATH } from '../../src/ingest/otlp/grpc-receiver.ts';
import { STATUS_DETAILS_KEY } from '../../src/ingest/otlp/grpc-status.ts';
import { createHttpReceiver } from '../../src/ingest/otlp/http-receiver.ts';
import type { PipelineInput } from '../../src/ingest/pipeline-input.ts';
import { type ReceiverConfig, ReceiverConfigSchema } from '../../src/ingest/otlp/receiver-config.ts';
import type { DeliverySource } from './source-delivery.contract.ts';

/** An OTLP export answer, read the same way off either transport. */
export interface ExportAnswer {
  /** The gRPC status code; over HTTP the `code` of the google.rpc.Status body (0 on 200). */
  code: number;
  /** HTTP only. */
  httpStatus?: number;
  /** HTTP `Retry-After`, or the seconds of the gRPC RetryInfo; undefined when none came. */
  retryAfterSeconds?: number;
  message: string;
}

export interface ExportOptions {
  /** Which export: traces (default) or logs. */
  signal?: 'traces' | 'logs';
  token?: string;
  /** Compress the request (HTTP `Content-Encoding: gzip`, gRPC gzip message compression). */
  gzip?: boolean;
}

export interface ServedReceiver {
  export(body: Uint8Array, options?: ExportOptions): Promise<ExportAnswer>;
  close(): Promise<void>;
}

/** One OTLP transport: its receiver, served over a real socket, and a real client for it. */
export interface OtlpTransport {
  name: string;
  serve(target: PipelineInput, config: ReceiverConfig): Promise<ServedReceiver>;
}

// An independent codec for answers: protobufjs reflection over google.rpc.Status and RetryInfo.
const rpc = protobuf.Root.fromJSON({
  nested: {
    Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
    Any: { fields: { typeUrl: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } },
    RetryInfo: { fields: { retryDelay: { type: 'Duration', id: 1 } } },
    Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 }, details: { rule: 'repeated', type: 'Any', id: 3 } } },
  },
});
interface StatusMessage {
  code?: number;
  message?: string;
  details?: { typeUrl: string; value: Uint8Array }[];
}
const decodeStatus = (bytes: Uint8Array) => rpc.lookupType('Status').toObject(rpc.lookupType('Status').decode(bytes), { defaults: true }) as StatusMessage;

export const httpTransport: OtlpTransport = {
  name: 'OTLP/HTTP',
  async serve(target, config) {
    const server = createHttpReceiver(config, target);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      async export(body, options = {}) {
        const headers: Record<string, string> = { 'content-type': 'application/x-protobuf' };
        if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
        if (options.gzip === true) headers['content-encoding'] = 'gzip';
        const res = await fetch(`${base}/v1/${options.signal ?? 'traces'}`, { method: 'POST', body: options.gzip === true ? gzipSync(body) : body, headers });
        const bytes = new Uint8Array(await res.arrayBuffer());
        const retryAfter = res.headers.get('retry-after');
        // 401 and 404 are answered in JSON whatever the request's type (it is not read before them).
        const status =
          res.status === 200
            ? { code: 0, message: '' }
            : res.headers.get('content-type') === 'application/json'
              ? (JSON.parse(new TextDecoder().decode(bytes)) as StatusMessage)
              : decodeStatus(bytes);
        return {
          code: status.code ?? 0,
          httpStatus: res.status,
          ...(retryAfter === null ? {} : { retryAfterSeconds: Number(retryAfter) }),
          message: status.message ?? '',
        };
      },
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  },
};

export const grpcTransport: OtlpTransport = {
  name: 'OTLP/gRPC',
  async serve(target, config) {
    const server = createGrpcReceiver(config, target);
    const port = await bindGrpcReceiver(server, { host: '127.0.0.1', port: 0 });
    return {
      export(body, options = {}) {
        const client = new grpc.Client(
          `127.0.0.1:${port}`,
          grpc.credentials.createInsecure(),
          options.gzip === true ? { 'grpc.default_compression_algorithm': 2 } : {},
        );
        const metadata = new grpc.Metadata();
        if (options.token !== undefined) metadata.set('authorization', `Bearer ${options.token}`);
        return new Promise<ExportAnswer>((resolve) => {
          client.makeUnaryRequest(
            options.signal === 'logs' ? LOGS_EXPORT_PATH : TRACE_EXPORT_PATH,
            (b: Buffer) => b,
            (b: Buffer) => b,
            Buffer.from(body),
            metadata,
            (error) => {
              client.close();
              if (error === null) return resolve({ code: 0, message: '' });
              const details = error.metadata?.get(STATUS_DETAILS_KEY)[0];
              const retryInfo = details instanceof Buffer ? decodeStatus(details).details?.find((d) => d.typeUrl.endsWith('google.rpc.RetryInfo')) : undefined;
              const delay =
                retryInfo === undefined
                  ? undefined
                  : (rpc.lookupType('RetryInfo').toObject(rpc.lookupType('RetryInfo').decode(retryInfo.value), { longs: Number }) as {
                      retryDelay?: { seconds?: number };
                    });
              resolve({
                code: error.code,
                ...(delay === undefined ? {} : { retryAfterSeconds: delay.retryDelay?.seconds ?? 0 }),
                message: error.details,
              });
            },
          );
        });
      },
      close: () => closeGrpcReceiver(server, 100),
    };
  },
};

/** gRPC codes of a refusal that carries a retry delay: an exporter sends the request again. */
const RETRIED_CODES = new Set([8, 14]);
/** How soon the adapter retries: sooner than the delay asks, so the suite stays quick. */
const RETRY_EVERY_MS = 50;

/** An OTLP transport as a source of the delivery contract: its client retries a refusal, as an exporter does. */
export function otlpDeliverySource(transport: OtlpTransport): DeliverySource {
  return {
    name: transport.name,
    async start(target) {
      const served = await transport.serve(target, ReceiverConfigSchema.parse({ retryAfterSeconds: 1 }));
      return {
        async send(body) {
          for (;;) {
            const answer = await served.export(body);
            if (!RETRIED_CODES.has(answer.code) || answer.retryAfterSeconds === undefined) return;
            await new Promise((r) => setTimeout(r, RETRY_EVERY_MS));
          }
        },
        close: () => served.close(),
      };
    },
  };
}
