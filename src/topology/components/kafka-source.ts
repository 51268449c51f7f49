import type { KafkaSourceConfig } from '../../ingest/kafka/config.ts';
import { KAFKA_SOURCE_PREFIX, registerKafkaSourceMetrics } from '../../ingest/kafka/metrics.ts';
import { KafkaSource, type RecordReader } from '../../ingest/kafka/source.ts';
import type { PositionedInput } from '../../ingest/pipeline-input.ts';
import { levelLog, type Logger } from '../../telemetry/logger.ts';
import type { MetricRegistry } from '../../telemetry/metrics.ts';
import { type Component, once } from '../component.ts';
import { REFUSAL } from '../../ingest/refusal.ts';

/**
 * The Kafka source (a consumer group member). Started: joined and consuming, its series
 * registered. Stopped: consumption paused, commits made below open trajectories, group left.
 */
export class KafkaSourceComponent implements Component {
  readonly name: string;
  readonly #reader: RecordReader | undefined;
  readonly #metricsPrefix: string;
  readonly #config: KafkaSourceConfig;
  readonly #target: PositionedInput;
  readonly #registry: MetricRegistry;
  readonly #logger: Logger;
  #source: KafkaSource | undefined;

  /**
   * `options`: stage 2 of a repartition reads its own records (`reader`) under its own name and
   * series prefix (`trajwatch_kafka_sessions_source_*`).
   */
  constructor(
    config: KafkaSourceConfig,
    target: PositionedInput,
    registry: MetricRegistry,
    logger: Logger,
    options: { name?: string; reader?: RecordReader; metricsPrefix?: string } = {},
  ) {
    this.name = options.name ?? 'source.kafka';
    this.#reader = options.reader;
    this.#metricsPrefix = options.metricsPrefix ?? KAFKA_SOURCE_PREFIX;
    this.#config = config;
    this.#target = target;
    this.#registry = registry;
    this.#logger = logger;
  }

  async start(): Promise<void> {
    const reader = this.#reader === undefined ? {} : { reader: this.#reader };
    const source = await KafkaSource.start(this.#config, this.#target, { log: levelLog(this.#logger), ...reader });
    this.#source = source;
    if (this.#registry !== undefined) registerKafkaSourceMetrics(this.#registry, () => source.stats(), this.#metricsPrefix);
    const { topic, groupId, brokers } = source.config;
    const what = this.#reader === undefined ? 'OTLP' : 'records';
    this.#logger.info({ topic, groupId, brokers }, `consuming ${what} from Kafka topic ${topic} as group ${groupId} (${brokers.join(',')})`);
  }

  readonly stop = once(async () => {
    await this.#source?.stop();
  });

  health(): string | undefined {
    return this.#source?.stats().paused === true ? REFUSAL.consumerPaused : undefined;
  }
}
