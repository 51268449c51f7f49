import type { AnalysisManifest } from '../../findings/manifest-schema.ts';
import type { Finding } from '../../findings/schema.ts';
import { isManifest, type FindingLogRecord, type FindingSink, type FindingStream } from '../finding-sink.ts';
import { Overflow, type OverflowWording } from '../delivery/overflow.ts';
import type { SinkRecord } from '../record.ts';
import type { KafkaSinkConfig } from './config.ts';
import { KafkaSink, logToStderr } from './sink.ts';
import type { KafkaSinkOptions, SinkLog } from './sink.ts';

/**
 * A finding or manifest as a Kafka record: keyed by trajectory (a manifest lands in the
 * partition of the findings it names, after them), deduped by `finding_id` or `manifest_id`.
 * A manifest carries a `record_kind` header, a finding none, so consumers tell them apart
 * without parsing the value.
 */
export function findingRecord(record: FindingLogRecord, stream: FindingStream = 'findings'): SinkRecord {
  const manifest = isManifest(record);
  return {
    topic: stream,
    key: record.subject.trajectory_key,
    id: manifest ? record.manifest_id : record.finding_id,
    value: JSON.stringify(record),
    // A finding's headers are what they always were: no `record_kind` header means a finding.
    headers: manifest ? { schema_version: record.schema_version, record_kind: record.record_kind } : { schema_version: record.schema_version },
  };
}

/**
 * The pipeline's {@link FindingSink} over a {@link KafkaSink}. `write` cannot refuse, so
 * findings that meet a full outbox wait in the engine's {@link Overflow}, in order, and move
 * into the outbox as delivery frees room; meanwhile `backpressure()` reports the full outbox so
 * the receiver refuses new input, which bounds the overflow to the findings already in flight.
 */
export class KafkaFindingSink implements FindingSink {
  readonly name = 'kafka';
  readonly kafka: KafkaSink;
  readonly #overflow: Overflow;

  constructor(kafka: KafkaSink, log: SinkLog = logToStderr) {
    this.kafka = kafka;
    this.#overflow = new Overflow(kafka.engine, { log, wording: WORDING });
  }

  /** Opens the outbox in `options.outboxDir` and starts delivering (see {@link KafkaSink.open}). */
  static async open(config: KafkaSinkConfig, options: KafkaSinkOptions): Promise<KafkaFindingSink> {
    return new KafkaFindingSink(await KafkaSink.open(config, options), options.log);
  }

  /** Findings waiting for room in the outbox (not yet durable). */
  get overflowRecords(): number {
    return this.#overflow.records;
  }

  /** Findings larger than `maxRecordBytes`, which no broker would take: logged and counted. */
  get refusedTooLarge(): number {
    return this.#overflow.refusedTooLarge;
  }

  write(findings: readonly Finding[], stream: FindingStream = 'findings'): void {
    if (findings.length === 0) return;
    this.#overflow.offer(findings.map((f) => findingRecord(f, stream)));
  }

  /** To the findings topic, keyed by trajectory: after the findings it names, in their partition. */
  writeManifest(manifest: AnalysisManifest): void {
    this.#overflow.offer([findingRecord(manifest)]);
  }

  backpressure(): string | undefined {
    return this.#overflow.backpressure();
  }

  /** Not yet acknowledged by the broker: in the outbox, or waiting for room in it. */
  backlog(): { records: number; bytes: number } {
    return this.#overflow.backlog();
  }

  /** Rejects, too, once anything was written after close: that was never sent. */
  flushed(): Promise<void> {
    return this.#overflow.flushed();
  }

  /** Delivers for at most the configured `closeTimeoutMs`; what is left stays in the outbox. */
  close(): Promise<void> {
    return this.#overflow.close(this.kafka.config.closeTimeoutMs);
  }
}

const WORDING: OverflowWording = {
  closed: 'kafka-sink-closed',
  unwritable: 'kafka-outbox-unwritable',
  full: 'kafka-outbox-full',
  sink: 'kafka sink',
  record: 'finding',
  sent: 'sent',
  closedUndelivered: 'closed with findings undelivered',
};
