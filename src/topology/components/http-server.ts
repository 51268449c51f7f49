import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatHostPort } from '../../config/host-port.ts';
import { createHttpReceiver, type ExtraRoutes, type RequestObserver } from '../../ingest/otlp/http-receiver.ts';
import type { ConnectionObserver } from '../../ingest/otlp/connection-limits.ts';
import type { InflightBudget } from '../../ingest/otlp/inflight-budget.ts';
import type { PipelineInput } from '../../ingest/pipeline-input.ts';
import type { ReceiverConfig } from '../../ingest/otlp/receiver-config.ts';
import type { Logger } from '../../telemetry/logger.ts';
import { type Component, once } from '../component.ts';

/** How long in-flight requests may finish after the server stops listening before they are cut. */
export const HTTP_CLOSE_GRACE_MS = 5_000;

export interface HttpServerOptions {
  config: ReceiverConfig;
  target: PipelineInput;
  observe: RequestObserver;
  /** `/metrics`, `/healthz`. */
  routes: ExtraRoutes;
  /** Serve `/v1/traces` and `/v1/logs`; without, the server is only the metrics and health endpoint. */
  otlp: boolean;
  logger: Logger;
  /** Default {@link HTTP_CLOSE_GRACE_MS}. */
  closeGraceMs?: number;
  /** The in-flight body budget shared with the gRPC receiver. */
  budget?: InflightBudget;
  /** Told of connections opened, closed and refused at `receiver.maxConnections`. */
  connections?: ConnectionObserver;
}

/**
 * The HTTP server: the OTLP/HTTP receiver and the metrics and health endpoint on one port.
 * Started: it listens and says where. Stopped: it stops listening, closes idle keep-alive
 * connections, lets requests in flight finish for `closeGraceMs`, then cuts them.
 */
export class HttpServerComponent implements Component {
  readonly name: string;
  readonly server: Server;
  readonly #config: ReceiverConfig;
  readonly #otlp: boolean;
  readonly #logger: Logger;
  readonly #closeGraceMs: number;
  #listening = false;

  constructor(options: HttpServerOptions) {
    this.#closeGraceMs = options.closeGraceMs ?? HTTP_CLOSE_GRACE_MS;
    this.name = options.otlp ? 'receiver.http' : 'metrics-endpoint';
    this.#config = options.config;
    this.#otlp = options.otlp;
    this.#logger = options.logger;
    this.server = createHttpReceiver(options.config, options.target, options.observe, options.routes, {
      otlp: options.otlp,
      logger: options.logger,
      ...(options.budget === undefined ? {} : { budget: options.budget }),
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    });
  }

  async start(): Promise<void> {
    const { host, port } = this.#config.otlpHttp;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.#listening = true;
    const address = this.server.address() as AddressInfo;
    const url = `${this.#config.tls === undefined ? 'http' : 'https'}://${formatHostPort({ host: address.address, port: address.port })}/`;
    if (this.#otlp) this.#logger.info({ url }, `listening on ${url}v1/traces and /v1/logs (OTLP/HTTP)`);
    else this.#logger.info({ url }, `listening on ${url} (/metrics, /healthz; OTLP receivers off)`);
  }

  readonly stop = once(async () => {
    if (!this.#listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.server.closeAllConnections();
        resolve();
      }, this.#closeGraceMs);
      timer.unref();
    });
    await Promise.race([closed, grace]);
    clearTimeout(timer);
  });

  health(): string | undefined {
    return undefined;
  }
}
