import { StorageError } from '../../errors.ts';
import type { AnalysisManifest } from '../../findings/manifest-schema.ts';
import type { Finding } from '../../findings/schema.ts';
import { type LevelLog, stderrLog } from '../../telemetry/logger.ts';
import { isManifest, type FindingLogRecord, type FindingSink, type FindingStream } from '../finding-sink.ts';
import type { SinkRecord } from '../record.ts';
import type { KafkaSinkConfig } from './config.ts';
import { KafkaSink } from './sink.ts';
import type { KafkaSinkOptions } from './sink.ts';
import { REFUSAL } from '../../ingest/refusal.ts';

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
 * findings that meet a full outbox wait here, in order, and move into the outbox as
 * delivery frees room; meanwhile `backpressure()` reports the full outbox so the receiver
 * refuses new input, which bounds this overflow to the findings already in flight.
 */
export class KafkaFindingSink implements FindingSink {
  readonly name = 'kafka';
  readonly kafka: KafkaSink;
  #overflow: SinkRecord[] = [];
  #draining: Promise<void> | undefined;
  #refusedTooLarge = 0;
  readonly #log: LevelLog;
  #closed = false;
  /** Records handed over after close: never sent, so every later `flushed()` rejects. */
  #refusedAfterClose = 0;

  constructor(kafka: KafkaSink, log: LevelLog = stderrLog('sinks.kafka')) {
    this.kafka = kafka;
    this.#log = log;
  }

  /** Opens the outbox in `options.outboxDir` and starts delivering (see {@link KafkaSink.open}). */
  static async open(config: KafkaSinkConfig, options: KafkaSinkOptions): Promise<KafkaFindingSink> {
    return new KafkaFindingSink(await KafkaSink.open(config, options), options.log);
  }

  /** Findings waiting for room in the outbox (not yet durable). */
  get overflowRecords(): number {
    return this.#overflow.length;
  }

  /** Findings larger than `maxRecordBytes`, which no broker would take: logged and counted. */
  get refusedTooLarge(): number {
    return this.#refusedTooLarge;
  }

  write(findings: readonly Finding[], stream: FindingStream = 'findings'): void {
    if (findings.length === 0) return;
    this.#send(findings.map((f) => findingRecord(f, stream)));
  }

  /** To the findings topic, keyed by trajectory: after the findings it names, in their partition. */
  writeManifest(manifest: AnalysisManifest): void {
    this.#send([findingRecord(manifest)]);
  }

  #send(records: SinkRecord[]): void {
    if (this.#closed) {
      this.#refusedAfterClose += records.length;
      return;
    }
    if (this.#overflow.length === 0 && this.kafka.write(records).ok) return;
    // Per record from here, so a too-large one cannot hold back the rest.
    this.#overflow.push(...records);
    this.#draining ??= this.#drain();
  }

  backpressure(): string | undefined {
    if (this.#closed) return REFUSAL.kafkaSinkClosed;
    return this.kafka.backpressure() ?? (this.#overflow.length > 0 ? REFUSAL.kafkaOutboxFull : undefined);
  }

  /** Not yet acknowledged by the broker: in the outbox, or waiting for room in it. */
  backlog(): { records: number; bytes: number } {
    const stats = this.kafka.stats();
    const overflowBytes = this.#overflow.reduce((sum, r) => sum + Buffer.byteLength(r.value), 0);
    return { records: stats.outboxRecords + this.#overflow.length, bytes: stats.outboxBytes + overflowBytes };
  }

  /** Rejects, too, once anything was written after close: that was never sent. */
  async flushed(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
    await this.kafka.flushed();
    if (this.#refusedAfterClose > 0) {
      throw new StorageError(`kafka sink closed: ${this.#refusedAfterClose} record(s) written after close were not sent`);
    }
  }

  /** Delivers for at most the configured `closeTimeoutMs`; what is left stays in the outbox. */
  async close(): Promise<void> {
    this.#closed = true;
    const result = await this.kafka.close();
    const lost = this.#overflow.length;
    if (lost > 0 || !result.flushed) {
      this.#log(lost > 0 ? 'error' : 'warn', 'closed with findings undelivered', { leftInOutbox: result.pendingRecords, neverWritten: lost });
    }
  }

  async #drain(): Promise<void> {
    while (this.#overflow.length > 0) {
      const result = this.kafka.write([this.#overflow[0]!]);
      if (result.ok) {
        this.#overflow.shift();
      } else if (result.reason === 'too-large') {
        this.#refusedTooLarge += 1;
        this.#log('error', 'finding larger than maxRecordBytes not sent', { finding_id: result.id, bytes: result.bytes });
        this.#overflow.shift();
      } else if (result.reason === 'closed') {
        break;
      } else {
        // full, or a write failure the outbox retries: wait for room (or close).
        await Promise.race([this.kafka.whenWritable(), new Promise((r) => setTimeout(r, 1_000))]);
      }
    }
    this.#draining = undefined;
  }
}
