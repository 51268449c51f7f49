import type { MetricRegistry } from '../telemetry/metrics.ts';
import { readGauge } from '../telemetry/metrics.ts';
import type { AssemblerStats } from './assembler.ts';

/**
 * The assembler's gauges, read from {@link AssemblerStats} at scrape time:
 * `trajwatch_trajectories_open`, `trajwatch_buffered_bytes`, `trajwatch_retained_bytes`,
 * `trajwatch_spans_deduplicated`, `trajwatch_capture_conflicts`, `trajwatch_late_spans`.
 */
export function registerAssemblerMetrics(registry: MetricRegistry, read: () => AssemblerStats): void {
  if (registry === undefined) return;
  readGauge(registry, 'trajwatch_trajectories_open', 'Trajectories buffered and not yet closed.', () => read().openTrajectories);
  readGauge(registry, 'trajwatch_buffered_bytes', 'Encoded bytes of the spans buffered in open trajectories.', () => read().bufferedBytes);
  readGauge(registry, 'trajwatch_retained_bytes', 'Encoded bytes of closed trajectories kept for late spans.', () => read().retainedBytes);
  readGauge(registry, 'trajwatch_spans_deduplicated', 'Exact duplicate span exports merged since start.', () => read().duplicateSpans);
  readGauge(
    registry,
    'trajwatch_capture_conflicts',
    'Spans whose id arrived again with a different payload since start (first kept, recorded).',
    () => read().conflictingSpans,
  );
  readGauge(
    registry,
    'trajwatch_late_spans',
    'Spans that arrived after their trajectory closed and opened a new revision, since start.',
    () => read().lateSpans,
  );
}
