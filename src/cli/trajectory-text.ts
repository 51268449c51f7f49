/**
 * One trajectory as a readable timeline, for `trajwatch show`: a header (key, revision,
 * complete or why not, traces, capture gaps), then one line per step in the trajectory's order
 * — offset from the first step, duration, kind, name (tool name and arguments for a tool
 * step), nested under its parent, errors marked — and under each step the findings whose
 * evidence names its span (`▲`). Findings that name no step of it are listed after. Pure:
 * rows of the logs in, lines out; telemetry text escaped for the terminal, long text cut with
 * the count of what was cut.
 */
import { shortened, terminalSafe } from './terminal-text.ts';
import { timeline, type FindingRow, type StepRow, type TrajectoryRow } from './trajectory-timeline.ts';

export { findingSpanIds, type FindingRow, type StepRow, type TrajectoryRow } from './trajectory-timeline.ts';

/** Longest text of a step (arguments, an error message) shown on its line. */
const MAX_TEXT = 120;

/** Nanoseconds (decimal string) as seconds with millisecond precision, `+12.345s`. */
function seconds(ns: bigint): string {
  const ms = ns / 1_000_000n;
  const sign = ms < 0n ? '-' : '+';
  const abs = ms < 0n ? -ms : ms;
  return `${sign}${abs / 1000n}.${String(abs % 1000n).padStart(3, '0')}s`;
}

const iso = (ns: bigint): string => new Date(Number(ns / 1_000_000n)).toISOString();

function stepLabel(step: StepRow): string {
  const parts: string[] = [];
  if (step.kind === 'tool') {
    parts.push(terminalSafe(step.toolName ?? step.name ?? '(tool name not captured)'));
    if (step.args?.raw !== undefined) parts.push(shortened(step.args.raw, MAX_TEXT));
  } else {
    parts.push(terminalSafe(step.name ?? '(unnamed)'));
    if (step.model !== undefined) parts.push(`model ${terminalSafe(step.model)}`);
    if (step.agentName !== undefined && step.kind === 'agent') parts.push(`agent ${terminalSafe(step.agentName)}`);
  }
  if (step.error !== undefined) {
    const what = [step.error.type, step.error.message].filter((x) => x !== undefined).join(': ');
    parts.push(`✗ ${what === '' ? 'failed' : shortened(what, MAX_TEXT)}`);
  }
  return parts.join('  ');
}

/** The timeline of `trajectory` with `findings` (those of its key) marked under their steps. */
export function trajectoryText(trajectory: TrajectoryRow, findings: readonly FindingRow[]): string[] {
  const out: string[] = [];
  const state = trajectory.complete ? 'complete' : `incomplete: ${trajectory.incompleteReasons.join(', ')}`;
  out.push(
    `trajectory ${terminalSafe(trajectory.key)}  revision ${trajectory.revision}  ${state}${trajectory.closedBy === undefined ? '' : `  (closed by ${trajectory.closedBy})`}`,
  );
  out.push(`traces: ${trajectory.traceIds.join(', ')}  steps: ${trajectory.steps.length}  findings: ${findings.length}`);
  for (const gap of trajectory.captureGaps ?? []) out.push(`capture gap: ${gap.reason} on ${gap.spanIds.length} span(s)`);
  const t = timeline(trajectory, findings);
  if (t.t0Ns === null) return out;
  out.push(`started ${iso(t.t0Ns)}`);
  out.push('');
  for (const row of t.rows) {
    const indent = '  '.repeat(Math.min(row.depth, 12));
    out.push(
      `${seconds(row.offsetNs).padStart(10)} ${seconds(row.durationNs).slice(1).padStart(9)}  ${indent}${row.step.kind.padEnd(9)} ${stepLabel(row.step)}`,
    );
    // A finding whose evidence names several steps is marked under each; it counts once.
    for (const finding of row.findings)
      out.push(`${' '.repeat(21)}  ${indent}▲ ${(finding.severity ?? '?').padEnd(6)} ${terminalSafe(finding.area)}: ${terminalSafe(finding.claim ?? '')}`);
  }
  const elsewhere = t.elsewhere;
  if (elsewhere.length > 0) {
    out.push('');
    out.push('findings naming no step of this revision:');
    for (const f of elsewhere) out.push(`  ▲ ${(f.severity ?? '?').padEnd(6)} ${terminalSafe(f.area)}: ${terminalSafe(f.claim ?? '')}`);
  }
  return out;
}
