import type { KafkaSourceConfig } from '../../ingest/kafka-source-config.ts';
import { registerKafkaSourceMetrics } from '../../ingest/kafka-source-metrics.ts';
import { KafkaSource } from '../../ingest/kafka-source.ts';
import type { PositionedInput } from '../../ingest/pipeline-input.ts';
import { levelLog, type Logger } from '../../telemetry/logger.ts';
import type { MetricRegistry } from '../../telemetry/metrics.ts';
import { type Component, once } from '../component.ts';

/**
 * The Kafka source (a consumer group member). Started: joined and consuming, its series
 * registered. Stopped: consumption paused, commits made below open trajectories, group left.
 */
export class KafkaSourceComponent implements Component {
  readonly name = 'source.kafka';
  readonly #config: KafkaSourceConfig;
  readonly #target: PositionedInput;
  readonly #registry: MetricRegistry;
  readonly #logger: Logger;
  #source: KafkaSource | undefined;

  constructor(config: KafkaSourceConfig, target: PositionedInput, registry: MetricRegistry, logger: Logger) {
    this.#config = config;
    this.#target = target;
    this.#registry = registry;
    this.#logger = logger;
  }

  async start(): Promise<void> {
    const source = await KafkaSource.start(this.#config, this.#target, { log: levelLog(this.#logger) });
    this.#source = source;
    if (this.#registry !== undefined) registerKafkaSourceMetrics(this.#registry, () => source.stats());
    const { topic, groupId, brokers } = source.config;
    this.#logger.info({ topic, groupId, brokers }, `consuming OTLP from Kafka topic ${topic} as group ${groupId} (${brokers.join(',')})`);
  }

  readonly stop = once(async () => {
    await this.#source?.stop();
  });

  health(): string | undefined {
    return this.#source?.stats().paused === true ? 'paused' : undefined;
  }
}
