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

export interface StepRow {
  id: string;
  traceId: string;
  parentId?: string;
  kind: string;
  name?: string;
  toolName?: string;
  args?: { raw?: string };
  result?: string;
  error?: { source?: string; type?: string; message?: string };
  model?: string;
  agentName?: string;
  startTime: string;
  endTime: string;
}

export interface TrajectoryRow {
  key: string;
  traceIds: string[];
  revision: number;
  complete: boolean;
  incompleteReasons: string[];
  closedBy?: string;
  captureGaps?: { reason: string; spanIds: string[] }[];
  steps: StepRow[];
}

export interface FindingRow {
  finding_id: string;
  area: string;
  severity?: string;
  claim?: string;
  subject: { trajectory_key: string; revision?: number };
  evidence_refs?: { kind: string; uri: string }[];
  code_eval_hits?: { anchor?: string }[];
}

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

/** The span ids a finding's evidence names (`span:<trace>/<span>` refs and L0 hit anchors). */
export function findingSpanIds(finding: FindingRow): Set<string> {
  const ids = new Set<string>();
  for (const ref of finding.evidence_refs ?? []) {
    const m = /^span:[0-9a-f]+\/([0-9a-f]+)$/.exec(ref.uri);
    if (ref.kind === 'span' && m !== null) ids.add(m[1]!);
  }
  for (const hit of finding.code_eval_hits ?? []) if (hit.anchor !== undefined) ids.add(hit.anchor);
  return ids;
}

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
  out.push(`trajectory ${terminalSafe(trajectory.key)}  revision ${trajectory.revision}  ${state}${trajectory.closedBy === undefined ? '' : `  (closed by ${trajectory.closedBy})`}`);
  out.push(`traces: ${trajectory.traceIds.join(', ')}  steps: ${trajectory.steps.length}  findings: ${findings.length}`);
  for (const gap of trajectory.captureGaps ?? []) out.push(`capture gap: ${gap.reason} on ${gap.spanIds.length} span(s)`);
  const steps = trajectory.steps;
  if (steps.length === 0) return out;
  const t0 = steps.reduce((min, s) => (BigInt(s.startTime) < min ? BigInt(s.startTime) : min), BigInt(steps[0]!.startTime));
  out.push(`started ${iso(t0)}`);
  out.push('');

  const byId = new Map(steps.map((s) => [s.id, s]));
  const depth = (step: StepRow): number => {
    let d = 0;
    const seen = new Set<string>();
    for (let p = step.parentId; p !== undefined && byId.has(p) && !seen.has(p); p = byId.get(p)!.parentId) {
      seen.add(p);
      d++;
    }
    return d;
  };
  const marked = findings.map((f) => ({ finding: f, spans: findingSpanIds(f) }));
  const placed = new Set<string>();
  for (const step of steps) {
    const start = BigInt(step.startTime);
    const took = BigInt(step.endTime) - start;
    const indent = '  '.repeat(Math.min(depth(step), 12));
    out.push(`${seconds(start - t0).padStart(10)} ${seconds(took).slice(1).padStart(9)}  ${indent}${step.kind.padEnd(9)} ${stepLabel(step)}`);
    for (const { finding, spans } of marked) {
      if (!spans.has(step.id)) continue;
      // A finding whose evidence names several steps is marked under each; it counts once.
      placed.add(finding.finding_id);
      out.push(`${' '.repeat(21)}  ${indent}▲ ${(finding.severity ?? '?').padEnd(6)} ${terminalSafe(finding.area)}: ${terminalSafe(finding.claim ?? '')}`);
    }
  }
  const elsewhere = findings.filter((f) => !placed.has(f.finding_id));
  if (elsewhere.length > 0) {
    out.push('');
    out.push('findings naming no step of this revision:');
    for (const f of elsewhere) out.push(`  ▲ ${(f.severity ?? '?').padEnd(6)} ${terminalSafe(f.area)}: ${terminalSafe(f.claim ?? '')}`);
  }
  return out;
}
