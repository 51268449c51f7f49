import type * as grpc from '@grpc/grpc-js';
import { formatHostPort, type HostPort } from '../../config/host-port.ts';
import { bindGrpcReceiver, closeGrpcReceiver, createGrpcReceiver, type GrpcReceiverConfig, type GrpcRequestObserver } from '../../ingest/otlp/grpc-receiver.ts';
import type { ConnectionObserver } from '../../ingest/otlp/connection-limits.ts';
import type { InflightBudget } from '../../ingest/otlp/inflight-budget.ts';
import type { PipelineInput } from '../../ingest/pipeline-input.ts';
import type { ReceiverTls } from '../../ingest/otlp/receiver-config.ts';
import { readTlsFiles, type TlsPem } from '../../ingest/otlp/tls-files.ts';
import type { Logger } from '../../telemetry/logger.ts';
import { type Component, once } from '../component.ts';

/** The OTLP/gRPC receiver. Started: bound and serving. Stopped: in-flight calls answered, or cut after grpc's grace. */
export class GrpcServerComponent implements Component {
  readonly name = 'receiver.grpc';
  readonly server: grpc.Server;
  readonly #address: HostPort;
  readonly #logger: Logger;
  readonly #tls: TlsPem | undefined;
  readonly #cap: { maxConnections: number; observer: ConnectionObserver };
  #bound = false;

  /**
   * `tls`: `receiver.tls`, read here so a missing file stops the build like the HTTP receiver's;
   * `shared`: the in-flight budget shared with the HTTP receiver, and who is told of connections.
   */
  constructor(
    config: GrpcReceiverConfig,
    address: HostPort,
    target: PipelineInput,
    observe: GrpcRequestObserver,
    logger: Logger,
    tls?: ReceiverTls,
    shared: { budget?: InflightBudget; connections?: ConnectionObserver } = {},
  ) {
    this.#address = address;
    this.#logger = logger;
    this.#tls = tls === undefined ? undefined : readTlsFiles(tls);
    this.#cap = { maxConnections: config.maxConnections, observer: shared.connections ?? { opened: () => {}, closed: () => {}, refused: () => {} } };
    this.server = createGrpcReceiver(config, target, observe, { logger, ...(shared.budget === undefined ? {} : { budget: shared.budget }) });
  }

  async start(): Promise<void> {
    const port = await bindGrpcReceiver(this.server, this.#address, this.#tls, this.#cap);
    this.#bound = true;
    const shown = formatHostPort({ host: this.#address.host, port });
    const over = this.#tls === undefined ? 'OTLP/gRPC traces and logs' : 'OTLP/gRPC traces and logs, TLS';
    this.#logger.info({ address: shown, tls: this.#tls !== undefined }, `otlp-grpc listening on ${shown} (${over})`);
  }

  readonly stop = once(async () => {
    // An unbound server has nothing to shut down; tryShutdown on it would still wait.
    if (this.#bound) await closeGrpcReceiver(this.server);
    else this.server.forceShutdown();
  });

  health(): string | undefined {
    return undefined;
  }
}
