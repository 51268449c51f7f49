import { type MetricRegistry, readLabelledGauge, type Reading } from '../telemetry/metrics.ts';
import type { Component } from './component.ts';

/**
 * `trajwatch_sink_backlog_records{sink}` and `trajwatch_sink_backlog_bytes{sink}`, read at
 * scrape time from every component that holds output not yet durable or acknowledged (the
 * sinks, the trajectory log, the span WAL — which has bytes only).
 */
export function registerBacklogMetrics(registry: MetricRegistry, components: readonly Component[]): void {
  if (registry === undefined) return;
  const holders = components.filter((c) => c.backlog !== undefined);
  readLabelledGauge(
    registry,
    'trajwatch_sink_backlog_records',
    'Records a sink holds that are not yet durable or acknowledged (the outbox depth for Kafka).',
    ['sink'],
    () =>
      holders.flatMap((c): Reading[] => {
        const { records } = c.backlog!();
        return records === undefined ? [] : [[{ sink: c.name }, records]];
      }),
  );
  readLabelledGauge(registry, 'trajwatch_sink_backlog_bytes', 'Bytes a sink holds that are not yet durable or acknowledged.', ['sink'], () =>
    holders.map((c): Reading => [{ sink: c.name }, c.backlog!().bytes]),
  );
}
