import { byLabel, type MetricRegistry, mirrorCounter, mirrorTotal, readFlag, readGauge } from '../../telemetry/metrics.ts';

/** What these series read of the sink (declared here: the sink imports this file, not the reverse). */
export interface OtlpEvaluationReadings {
  exported: number;
  exportErrors: number;
  backlogRecords: number;
  refusedFull: number;
  refusedTooLarge: number;
  /** Findings whose external view could not be trusted: never exported. */
  refusedAudience: number;
  failing: boolean;
}

/**
 * `trajwatch_otlp_evaluations_exported_total`, `_export_errors_total`, `_refused_total{reason}`,
 * `trajwatch_otlp_evaluations_backlog_records`, `trajwatch_otlp_evaluations_failing`, read at
 * scrape time. Without a registry: nothing.
 */
export function registerOtlpEvaluationMetrics(registry: MetricRegistry, read: () => OtlpEvaluationReadings): void {
  if (registry === undefined) return;
  mirrorTotal(registry, 'trajwatch_otlp_evaluations_exported_total', 'Evaluation events acknowledged by the OTLP receiver.', () => read().exported);
  mirrorTotal(
    registry,
    'trajwatch_otlp_evaluations_export_errors_total',
    'Failed OTLP export requests (each retried from the outbox).',
    () => read().exportErrors,
  );
  mirrorCounter(
    registry,
    'trajwatch_otlp_evaluations_refused_total',
    'Evaluation events refused, by reason (full: retried; too-large: never sendable; audience: the external view could not be trusted, never sent).',
    ['reason'],
    () => {
      const s = read();
      return byLabel('reason', { full: s.refusedFull, 'too-large': s.refusedTooLarge, audience: s.refusedAudience });
    },
  );
  readGauge(
    registry,
    'trajwatch_otlp_evaluations_backlog_records',
    'Evaluation events written and not yet acknowledged by the OTLP receiver.',
    () => read().backlogRecords,
  );
  readFlag(registry, 'trajwatch_otlp_evaluations_failing', '1 from a failed export until the next success.', () => read().failing);
}
