import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Where a component declares its Prometheus series: the topology's one registry, or
 * `undefined` when nobody can scrape (replay, tests), and then the component's telemetry is a
 * no-op that allocates and counts nothing.
 */
export type MetricRegistry = Registry | undefined;

/** The registry `serve` exposes on `/metrics`, with the process's default series (heap, CPU, event loop). */
export function createMetricRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** One series of a reading: its labels and its value. */
export type Reading = [labels: Record<string, string>, value: number];

/**
 * A counter that mirrors a running total owned elsewhere: at scrape time it advances by
 * what the owner counted since the last scrape, so the hot path counts once, in the owner. A
 * series exists once the owner reports it (a reported 0 shows as 0; a total the owner does
 * not know stays absent).
 */
export function mirrorCounter(registry: Registry, name: string, help: string, labelNames: readonly string[], read: () => Iterable<Reading>): void {
  const last = new Map<string, number>();
  const counter = new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const [labels, total] of read()) {
        const key = JSON.stringify(labels);
        const seen = last.get(key);
        const delta = total - (seen ?? 0);
        if (delta > 0 || seen === undefined) this.inc(labels, Math.max(0, delta));
        last.set(key, total);
      }
    },
  });
  // prom-client starts a label-less counter at 0; here only the owner's report creates it.
  if (labelNames.length === 0) counter.remove({});
}

/** A gauge read from its owner at scrape time (free between scrapes). */
export function readGauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** A 0/1 gauge read from its owner at scrape time: 1 while `read` is true (`..._failing`). */
export function readFlag(registry: Registry, name: string, help: string, read: () => boolean): void {
  readGauge(registry, name, help, () => (read() ? 1 : 0));
}

/** A labelled gauge read from its owner at scrape time; each reading sets one series. */
export function readLabelledGauge(registry: Registry, name: string, help: string, labelNames: readonly string[], read: () => Iterable<Reading>): void {
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const [labels, value] of read()) this.set(labels, value);
    },
  });
}

/**
 * A counter a component increments itself, on `registry` (unregistered, counting nowhere
 * visible, when there is none).
 *
 * @example
 * const refused = counter(registry, 'trajwatch_x_refused_total', 'Requests refused, by reason.', ['reason']);
 * refused.inc({ reason: 'full' });
 */
export function counter<const L extends string = never>(registry: MetricRegistry, name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  return new Counter<L>({ name, help, labelNames, registers: registry === undefined ? [] : [registry] });
}

/** A histogram a component observes itself, with its buckets (unregistered when there is no registry). */
export function histogram<const L extends string = never>(
  registry: MetricRegistry,
  name: string,
  help: string,
  buckets: readonly number[],
  labelNames: readonly L[] = [],
): Histogram<L> {
  return new Histogram<L>({ name, help, labelNames, buckets: [...buckets], registers: registry === undefined ? [] : [registry] });
}

/** A label-less {@link mirrorCounter}: one running total owned elsewhere. */
export function mirrorTotal(registry: Registry, name: string, help: string, read: () => number): void {
  mirrorCounter(registry, name, help, [], () => [[{}, read()]]);
}

/** `{ value: n }` counts as readings labelled `{ [label]: value }`, in the counts' order. */
export const byLabel = (label: string, counts: Readonly<Record<string, number>>): Reading[] =>
  Object.entries(counts).map(([value, n]) => [{ [label]: value }, n]);

/** `{ reason: n }` counts as readings labelled `{ outcome, reason }`. */
export const byReason = (counts: Record<string, number>, outcome: string): Reading[] => Object.entries(counts).map(([reason, n]) => [{ outcome, reason }, n]);
