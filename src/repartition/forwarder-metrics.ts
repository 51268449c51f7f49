import { byLabel, mirrorCounter, mirrorTotal, readGauge, type MetricRegistry } from '../telemetry/metrics.ts';
import type { ForwarderStats } from './forwarder.ts';

/**
 * The repartition forward's series, read at scrape time: `trajwatch_repartition_traces_total{outcome}`
 * (`forwarded`, `refused` for their size, `skipped`: no session, analyzed by stage 1),
 * `trajwatch_repartition_send_errors_total`, and the gauges `trajwatch_repartition_in_flight_bytes`
 * and `_records` (sent, not yet acknowledged).
 */
export function registerForwarderMetrics(registry: MetricRegistry, read: () => ForwarderStats): void {
  if (registry === undefined) return;
  mirrorCounter(
    registry,
    'trajwatch_repartition_traces_total',
    'Closed stage-1 traces by what became of them: forwarded, refused (too large), skipped (no session).',
    ['outcome'],
    () => {
      const s = read();
      return byLabel('outcome', { forwarded: s.forwarded, refused: s.refused, skipped: s.skipped });
    },
  );
  mirrorTotal(registry, 'trajwatch_repartition_send_errors_total', 'Failed produce attempts to the repartition topic (each retried).', () => read().sendErrors);
  readGauge(registry, 'trajwatch_repartition_in_flight_bytes', 'Forwarded bytes not yet acknowledged by the broker.', () => read().inFlightBytes);
  readGauge(registry, 'trajwatch_repartition_in_flight_records', 'Forwarded records not yet acknowledged by the broker.', () => read().inFlightRecords);
}
