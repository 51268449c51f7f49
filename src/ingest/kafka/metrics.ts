import { Counter, Gauge, type Registry } from 'prom-client';
import type { KafkaSourceStats } from './source.ts';

/**
 * The Kafka source's Prometheus series, read from {@link KafkaSourceStats} at scrape time
 * (nothing is counted twice on the hot path). Absent stats (no Kafka source) register nothing.
 *
 * Counters: `trajwatch_kafka_source_records_total`, `_spans_total`, `_log_records_total`, `_dead_letter_total{reason}`,
 * `_commits_total{outcome}`, `_pauses_total`, `_joins_total`, `_dropped_trajectories_total`.
 * Gauges: `trajwatch_kafka_source_lag_records`, `_assigned_partitions`, `_paused`.
 */
/** The series prefix of the OTLP source's consumer. */
export const KAFKA_SOURCE_PREFIX = 'trajwatch_kafka_source';
/** The series prefix of stage 2's consumer of a repartition (docs/scaling-out.md §4). */
export const KAFKA_SESSIONS_SOURCE_PREFIX = 'trajwatch_kafka_sessions_source';

/** `prefix`: {@link KAFKA_SOURCE_PREFIX} or {@link KAFKA_SESSIONS_SOURCE_PREFIX}. */
export function registerKafkaSourceMetrics(registry: Registry, read: () => KafkaSourceStats, prefix = KAFKA_SOURCE_PREFIX): void {
  const mirror = (name: string, help: string, labelNames: string[], totals: (s: KafkaSourceStats) => [Record<string, string>, number][]) => {
    const last = new Map<string, number>();
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        for (const [labels, total] of totals(read())) {
          const key = JSON.stringify(labels);
          const delta = total - (last.get(key) ?? 0);
          if (delta > 0) this.inc(labels, delta);
          last.set(key, total);
        }
      },
    });
  };
  const gauge = (name: string, help: string, value: (s: KafkaSourceStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value(read()));
      },
    });
  mirror(`${prefix}_records_total`, 'Records consumed from the Kafka source topic (decoded or dead-lettered).', [], (s) => [[{}, s.recordsConsumed]]);
  mirror(`${prefix}_spans_total`, 'Spans decoded from Kafka source records.', [], (s) => [[{}, s.spansConsumed]]);
  mirror(`${prefix}_log_records_total`, 'Log records decoded from the logs topic (source.kafka.logs).', [], (s) => [[{}, s.logRecordsConsumed]]);
  mirror(`${prefix}_dead_letter_total`, 'Undecodable records sent to the dead-letter topic, by reason.', ['reason'], (s) =>
    Object.entries(s.deadLettered).map(([reason, n]) => [{ reason }, n]),
  );
  mirror(`${prefix}_commits_total`, 'Offset commits of the Kafka source, by outcome.', ['outcome'], (s) => [
    [{ outcome: 'ok' }, s.commits],
    [{ outcome: 'failed' }, s.commitErrors],
  ]);
  mirror(`${prefix}_pauses_total`, 'Times the consumer paused because the pipeline refused input.', [], (s) => [[{}, s.pauses]]);
  mirror(`${prefix}_joins_total`, 'Consumer group joins; each replays the assigned partitions from their commits.', [], (s) => [[{}, s.joins]]);
  mirror(`${prefix}_dropped_trajectories_total`, 'Open trajectories forgotten at a rebalance or stop, rebuilt by the replay.', [], (s) => [
    [{}, s.droppedTrajectories],
  ]);
  gauge(`${prefix}_lag_records`, 'Records behind the high watermark on the assigned partitions (as of their last batch).', (s) => s.lagRecords);
  gauge(`${prefix}_assigned_partitions`, 'Partitions of the source topic this instance owns.', (s) => s.assignedPartitions.length);
  gauge(`${prefix}_paused`, '1 while the consumer is paused because the pipeline refuses input.', (s) => (s.paused ? 1 : 0));
}
