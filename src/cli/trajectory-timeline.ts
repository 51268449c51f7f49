/**
 * The model of a trajectory's timeline, shared by `show`'s text and the trajectory page: each
 * step in the trajectory's order with its depth under its parent, its offset from the first
 * step and its duration, and the findings whose evidence names it (a finding naming several
 * steps is under each); the findings naming no step of it apart. Pure.
 */
export interface StepRow {
  id: string;
  traceId: string;
  parentId?: string;
  kind: string;
  name?: string;
  toolName?: string;
  args?: { raw?: string };
  result?: string;
  /** Input other than tool arguments (an LLM step's messages, an agent's input), as captured. */
  input?: string;
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

/** The part of an analysis manifest the trajectory page shows. */
export interface ManifestRow {
  record_kind: string;
  subject: { trajectory_key: string; revision: number };
  capture?: { complete: boolean; incomplete_reasons: string[]; notes?: { reason: string; count: number; detail: string }[] };
  checks?: { check: string; status: string; finding_count: number; reason?: string; detail?: string }[];
  judge?: string;
  windows?: { window_id: string; kind: string; fate: string; reason?: string; finding_ids: string[] }[];
  windows_omitted?: { fate: string; reason: string; count: number }[];
}

export interface TimelineRow {
  step: StepRow;
  depth: number;
  offsetNs: bigint;
  durationNs: bigint;
  findings: FindingRow[];
}

export interface Timeline {
  /** The earliest step start; null without steps. */
  t0Ns: bigint | null;
  rows: TimelineRow[];
  /** Findings whose evidence names no step of this revision. */
  elsewhere: FindingRow[];
}

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

export function timeline(trajectory: TrajectoryRow, findings: readonly FindingRow[]): Timeline {
  const steps = trajectory.steps;
  if (steps.length === 0) return { t0Ns: null, rows: [], elsewhere: [...findings] };
  const t0 = steps.reduce((min, s) => (BigInt(s.startTime) < min ? BigInt(s.startTime) : min), BigInt(steps[0]!.startTime));
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
  const rows = steps.map((step) => {
    const start = BigInt(step.startTime);
    const under = marked.filter((m) => m.spans.has(step.id)).map((m) => m.finding);
    for (const f of under) placed.add(f.finding_id);
    return { step, depth: depth(step), offsetNs: start - t0, durationNs: BigInt(step.endTime) - start, findings: under };
  });
  return { t0Ns: t0, rows, elsewhere: findings.filter((f) => !placed.has(f.finding_id)) };
}

const ms = (ns: bigint) => Number(ns / 1000n) / 1000;

/**
 * What the trajectory page draws, as JSON: the header, the capture gaps, the manifest's claims,
 * the timeline rows (times in milliseconds; the step's captured content as the window store
 * writes an event, so the page reads it as it reads a window's events) and the findings by id.
 */
export function trajectoryPageView(trajectory: TrajectoryRow, findings: readonly FindingRow[], manifest: ManifestRow | null) {
  const t = timeline(trajectory, findings);
  return {
    key: trajectory.key,
    revision: trajectory.revision,
    complete: trajectory.complete,
    incompleteReasons: trajectory.incompleteReasons,
    closedBy: trajectory.closedBy ?? null,
    traceIds: trajectory.traceIds,
    startedAt: t.t0Ns === null ? null : new Date(Number(t.t0Ns / 1_000_000n)).toISOString(),
    captureGaps: trajectory.captureGaps ?? [],
    manifest:
      manifest === null
        ? null
        : {
            judge: manifest.judge ?? null,
            checks: manifest.checks ?? [],
            windows: manifest.windows ?? [],
            windowsOmitted: manifest.windows_omitted ?? [],
            notes: manifest.capture?.notes ?? [],
          },
    findings: findings.map((f) => ({ id: f.finding_id, severity: f.severity ?? null, area: f.area, claim: f.claim ?? '' })),
    steps: t.rows.map((r) => ({
      id: r.step.id,
      parentId: r.step.parentId ?? null,
      depth: r.depth,
      offsetMs: ms(r.offsetNs),
      durationMs: ms(r.durationNs),
      kind: r.step.kind,
      name: r.step.name ?? null,
      content: JSON.stringify({
        step: r.step.kind,
        name: r.step.name,
        status: r.step.error === undefined ? 'ok' : 'error',
        ...(r.step.toolName === undefined ? {} : { tool: r.step.toolName }),
        ...(r.step.agentName === undefined ? {} : { agent: r.step.agentName }),
        ...(r.step.model === undefined ? {} : { model: r.step.model }),
        ...(r.step.input === undefined ? {} : { input: r.step.input }),
        ...(r.step.args?.raw === undefined ? {} : { args: r.step.args.raw }),
        ...(r.step.result === undefined ? {} : { result: r.step.result }),
        ...(r.step.error === undefined ? {} : { error: r.step.error }),
      }),
      findingIds: r.findings.map((f) => f.finding_id),
    })),
    elsewhere: t.elsewhere.map((f) => f.finding_id),
  };
}
