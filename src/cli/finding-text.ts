/**
 * One readable line per record of the findings log, for `trajwatch tail --format text`:
 * time, severity, area, trajectory, claim for a finding; time-less `manifest` lines for an
 * analysis manifest. Pure: a line of the log in, a line of text out. A line that is not JSON
 * is shown as it is (escaped), never dropped.
 */
import { terminalSafe } from './terminal-text.ts';

type Json = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The text line for one JSON line of findings.jsonl or alarms.jsonl (or of the topic). */
export function recordText(line: string): string {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return `(not JSON) ${terminalSafe(line)}`;
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return `(not an object) ${terminalSafe(line)}`;
  const r = record as Json;
  const subject = (r.subject ?? {}) as Json;
  const key = terminalSafe(str(subject.trajectory_key) ?? '?');
  if (r.record_kind !== undefined) return manifestText(r, key);
  const time = str(r.observed_at) ?? str((r.covariates as Json | undefined)?.observed_at) ?? '-';
  const severity = (str(r.severity) ?? '?').padEnd(6);
  const area = terminalSafe(str(r.area) ?? '?');
  const revision = typeof subject.revision === 'number' && subject.revision > 1 ? ` rev ${subject.revision}` : '';
  return `${time}  ${severity} ${area}  ${key}${revision}  ${terminalSafe(str(r.claim) ?? '')}`;
}

function manifestText(r: Json, key: string): string {
  const subject = r.subject as Json;
  const capture = (r.capture ?? {}) as Json;
  const checks = Array.isArray(r.checks) ? (r.checks as Json[]) : [];
  const byStatus = new Map<string, number>();
  for (const c of checks) {
    const status = str(c.status) ?? '?';
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  }
  const counts = [...byStatus].map(([s, n]) => `${n} ${terminalSafe(s)}`).join(', ');
  const complete =
    capture.complete === true ? 'complete' : `incomplete (${((capture.incomplete_reasons as string[] | undefined) ?? []).map(terminalSafe).join(', ')})`;
  return `manifest  ${key} rev ${String(subject.revision ?? '?')}  ${complete}, ${String(capture.steps ?? '?')} steps; checks: ${counts || 'none'}`;
}
