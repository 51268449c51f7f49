import type * as grpc from '@grpc/grpc-js';
import { formatHostPort, type HostPort } from '../../config/host-port.ts';
import { bindGrpcReceiver, closeGrpcReceiver, createGrpcReceiver, type GrpcReceiverConfig, type GrpcRequestObserver } from '../../ingest/grpc-receiver.ts';
import type { PipelineInput } from '../../ingest/pipeline-input.ts';
import type { Logger } from '../../telemetry/logger.ts';
import { type Component, once } from '../component.ts';

/** The OTLP/gRPC receiver. Started: bound and serving. Stopped: in-flight calls answered, or cut after grpc's grace. */
export class GrpcServerComponent implements Component {
  readonly name = 'receiver.grpc';
  readonly server: grpc.Server;
  readonly #address: HostPort;
  readonly #logger: Logger;
  #bound = false;

  constructor(config: GrpcReceiverConfig, address: HostPort, target: PipelineInput, observe: GrpcRequestObserver, logger: Logger) {
    this.#address = address;
    this.#logger = logger;
    this.server = createGrpcReceiver(config, target, observe, { logger });
  }

  async start(): Promise<void> {
    const port = await bindGrpcReceiver(this.server, this.#address);
    this.#bound = true;
    const shown = formatHostPort({ host: this.#address.host, port });
    this.#logger.info({ address: shown }, `otlp-grpc listening on ${shown} (OTLP/gRPC traces and logs)`);
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
