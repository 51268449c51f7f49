import { type MetricRegistry, mirrorCounter, type Reading } from '../telemetry/metrics.ts';
import type { AudienceRefusals } from './audience-refusals.ts';

/**
 * `trajwatch_audience_refused_total{sink, kind}`: records whose external view could not be
 * trusted, kept in the quarantine log instead of that sink, read at scrape time. Without a
 * registry: nothing.
 */
export function registerAudienceRefusalMetrics(registry: MetricRegistry, refusals: AudienceRefusals): void {
  if (registry === undefined) return;
  mirrorCounter(
    registry,
    'trajwatch_audience_refused_total',
    'Records an external view refused (audience-strip-failed: a field without a declared audience), by sink and record kind; kept whole in the internal quarantine log, not written to that sink.',
    ['sink', 'kind'],
    () => refusals.counts().map((c): Reading => [{ sink: c.sink, kind: c.kind }, c.count]),
  );
}
