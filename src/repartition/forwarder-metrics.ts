import { byLabel, mirrorCounter, mirrorTotal, readGauge, type MetricRegistry } from '../telemetry/metrics.ts';
import type { ForwarderStats } from './forwarder.ts';

/**
 * The repartition forward's series, read at scrape time: `trajwatch_repartition_traces_total{outcome}`
 * (`forwarded`, `refused` by the broker, `skipped`: no session, analyzed by stage 1),
 * `trajwatch_repartition_fragmented_traces_total`, `trajwatch_repartition_fragments_total`,
 * `trajwatch_repartition_forwarded_bytes_total` (before compression),
 * `trajwatch_repartition_send_errors_total`, and the gauges `trajwatch_repartition_in_flight_bytes`
 * and `_records` (sent, not yet acknowledged).
 */
export function registerForwarderMetrics(registry: MetricRegistry, read: () => ForwarderStats): void {
  if (registry === undefined) return;
  mirrorCounter(
    registry,
    'trajwatch_repartition_traces_total',
    'Closed stage-1 traces by what became of them: forwarded, refused (by the broker, too large), skipped (no session).',
    ['outcome'],
    () => {
      const s = read();
      return byLabel('outcome', { forwarded: s.forwarded, refused: s.refused, skipped: s.skipped });
    },
  );
  mirrorTotal(
    registry,
    'trajwatch_repartition_fragmented_traces_total',
    'Traces forwarded in fragments (their record over maxRecordBytes).',
    () => read().fragmented,
  );
  mirrorTotal(registry, 'trajwatch_repartition_fragments_total', 'Fragment records sent.', () => read().fragments);
  mirrorTotal(
    registry,
    'trajwatch_repartition_forwarded_bytes_total',
    'Record value bytes acknowledged by the broker (before compression).',
    () => read().forwardedBytes,
  );
  mirrorTotal(registry, 'trajwatch_repartition_send_errors_total', 'Failed produce attempts to the repartition topic (each retried).', () => read().sendErrors);
  readGauge(registry, 'trajwatch_repartition_in_flight_bytes', 'Forwarded bytes not yet acknowledged by the broker.', () => read().inFlightBytes);
  readGauge(registry, 'trajwatch_repartition_in_flight_records', 'Forwarded records not yet acknowledged by the broker.', () => read().inFlightRecords);
}
