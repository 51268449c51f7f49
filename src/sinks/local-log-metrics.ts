import { type MetricRegistry, mirrorCounter, readLabelledGauge, type Reading } from '../telemetry/metrics.ts';
import type { JsonlLog } from './jsonl-log.ts';

/**
 * The local logs' disk, read at scrape time: `trajwatch_local_log_bytes{log}` (their files
 * now) and `trajwatch_local_log_retention_deleted_bytes_total{log}` (what retention deleted,
 * oldest closed files first), so what the bound removed is counted, not silent. `log` is the
 * active file's name (`findings.jsonl`). Without a registry: nothing.
 */
export function registerLocalLogMetrics(registry: MetricRegistry, logs: readonly JsonlLog[]): void {
  if (registry === undefined || logs.length === 0) return;
  const each = (value: (log: JsonlLog) => number) => (): Reading[] => logs.map((log) => [{ log: log.name }, value(log)]);
  readLabelledGauge(
    registry,
    'trajwatch_local_log_bytes',
    "Bytes in a local log's files (the active one and its closed ones).",
    ['log'],
    each((l) => l.disk.fileBytes),
  );
  mirrorCounter(
    registry,
    'trajwatch_local_log_retention_deleted_bytes_total',
    'Bytes of closed local-log files deleted by retention (sinks.retention: maxBytes, maxAgeHours).',
    ['log'],
    each((l) => l.disk.deletedBytes),
  );
}
