import type { AnalysisManifest } from '../../findings/manifest-schema.ts';
import { recordJson } from '../../findings/record-json.ts';
import type { Finding } from '../../findings/schema.ts';
import { OutboxFindingSink, type OverflowWording } from '../delivery/outbox-finding-sink.ts';
import { isManifest, type FindingLogRecord, type FindingStream } from '../finding-sink.ts';
import type { SinkRecord } from '../record.ts';
import type { KafkaSinkConfig } from './config.ts';
import { KafkaSink } from './sink.ts';
import type { KafkaSinkOptions } from './sink.ts';
import { type LevelLog, stderrLog } from '../../telemetry/logger.ts';
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
    value: recordJson(record),
    // A finding's headers are what they always were: no `record_kind` header means a finding.
    headers: manifest ? { schema_version: record.schema_version, record_kind: record.record_kind } : { schema_version: record.schema_version },
  };
}

/**
 * The pipeline's {@link FindingSink} over a {@link KafkaSink}: findings and manifests as
 * records (`findingRecord`) into its delivery engine, through the overflow every outbox sink
 * has ({@link OutboxFindingSink}).
 */
export class KafkaFindingSink extends OutboxFindingSink {
  readonly name = 'kafka';
  readonly kafka: KafkaSink;

  constructor(kafka: KafkaSink, log: LevelLog = stderrLog('sinks.kafka')) {
    super(kafka.engine, { log, wording: WORDING, closeTimeoutMs: kafka.config.closeTimeoutMs });
    this.kafka = kafka;
  }

  /** Opens the outbox in `options.outboxDir` and starts delivering (see {@link KafkaSink.open}). */
  static async open(config: KafkaSinkConfig, options: KafkaSinkOptions): Promise<KafkaFindingSink> {
    return new KafkaFindingSink(await KafkaSink.open(config, options), options.log);
  }

  write(findings: readonly Finding[], stream: FindingStream = 'findings'): void {
    if (findings.length === 0) return;
    this.offer(findings.map((f) => findingRecord(f, stream)));
  }

  /** To the findings topic, keyed by trajectory: after the findings it names, in their partition. */
  writeManifest(manifest: AnalysisManifest): void {
    this.offer([findingRecord(manifest)]);
  }
}

const WORDING: OverflowWording = {
  closed: REFUSAL.kafkaSinkClosed,
  unwritable: REFUSAL.kafkaOutboxUnwritable,
  full: REFUSAL.kafkaOutboxFull,
  sink: 'kafka sink',
  record: 'finding',
  sent: 'sent',
  closedUndelivered: 'closed with findings undelivered',
};
