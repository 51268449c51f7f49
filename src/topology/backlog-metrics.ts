import { type MetricRegistry, readLabelledGauge, type Reading } from '../telemetry/metrics.ts';
import type { Component } from './component.ts';

/**
 * `trajwatch_sink_backlog_records{sink}` and `trajwatch_sink_backlog_bytes{sink}`, read at
 * scrape time from every component that holds output not yet durable or acknowledged (the
 * sinks, the trajectory log, the span WAL — which has bytes only), and their bounds
 * `trajwatch_sink_backlog_limit_{records,bytes}{sink}` where a component has one.
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
  // The bounds are fixed at build time; exported as gauges so a rule can divide by them.
  const limited = components.filter((c) => c.backlogLimit !== undefined);
  readLabelledGauge(
    registry,
    'trajwatch_sink_backlog_limit_records',
    'Backlog records at which a sink refuses new input (where it has such a bound).',
    ['sink'],
    () => limited.flatMap((c): Reading[] => (c.backlogLimit!.records === undefined ? [] : [[{ sink: c.name }, c.backlogLimit!.records]])),
  );
  readLabelledGauge(
    registry,
    'trajwatch_sink_backlog_limit_bytes',
    'Backlog bytes at which a sink refuses new input: the span WAL, the Kafka outbox, the trajectory log.',
    ['sink'],
    () => limited.map((c): Reading => [{ sink: c.name }, c.backlogLimit!.bytes]),
  );
}
