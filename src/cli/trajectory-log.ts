/**
 * One trajectory from the local logs of a data directory, as `show` and the trajectory page
 * read it: the latest revision of the key (or of the one key a prefix names, or — when asked —
 * of the trajectory holding a trace id), its findings once each up to that revision, and the
 * analysis manifest of that revision.
 */
import { join } from 'node:path';
import { MANIFEST_RECORD_KIND } from '../findings/manifest-schema.ts';
import { logFiles, readLogLines } from './local-log-files.ts';
import { terminalSafe } from './terminal-text.ts';
import type { FindingRow, ManifestRow, TrajectoryRow } from './trajectory-timeline.ts';

export type TrajectoryLookup =
  | { kind: 'no-log'; path: string }
  | { kind: 'no-match'; why: string }
  | { kind: 'found'; trajectory: TrajectoryRow; findings: FindingRow[]; manifest: ManifestRow | null };

const parse = <T>(line: string): T | undefined => {
  try {
    return JSON.parse(line) as T;
  } catch {
    return undefined;
  }
};

/**
 * Looks `wanted` up in `dataDir`'s logs: the key itself, else the one key it is a prefix of,
 * else (with `byTraceId`) the one trajectory whose traces include it — a trace link (Grafana's
 * exemplar) knows the trace id, not the session key.
 */
export async function lookUpTrajectory(dataDir: string, wanted: string, options: { byTraceId?: boolean } = {}): Promise<TrajectoryLookup> {
  const trajectoriesPath = join(dataDir, 'trajectories.jsonl');
  if ((await logFiles(trajectoriesPath)).length === 0) return { kind: 'no-log', path: trajectoriesPath };
  // The latest revision of each key (a later revision of a trajectory replaces the earlier).
  const latest = new Map<string, TrajectoryRow>();
  let read = 0;
  for (const line of await readLogLines(trajectoriesPath)) {
    const row = parse<TrajectoryRow>(line);
    if (row === undefined || typeof row.key !== 'string') continue;
    read++;
    const seen = latest.get(row.key);
    if (seen === undefined || row.revision >= seen.revision) latest.set(row.key, row);
  }
  let matches = latest.has(wanted) ? [wanted] : [...latest.keys()].filter((k) => k.startsWith(wanted));
  if (matches.length === 0 && options.byTraceId === true) matches = [...latest.values()].filter((t) => t.traceIds.includes(wanted)).map((t) => t.key);
  if (matches.length !== 1) {
    const why =
      matches.length === 0
        ? `no trajectory with key ${terminalSafe(wanted)} (or starting with it) in ${trajectoriesPath} (${read} trajectory lines read)`
        : `${matches.length} trajectories start with ${terminalSafe(wanted)}: ${matches.slice(0, 10).map(terminalSafe).join(', ')}${matches.length > 10 ? ', ...' : ''}`;
    return { kind: 'no-match', why };
  }
  const trajectory = latest.get(matches[0]!)!;
  // Its findings, once each (by finding_id, the latest revision's copy), up to the revision shown; the manifest of that revision.
  const findings = new Map<string, FindingRow>();
  let manifest: ManifestRow | null = null;
  for (const line of await readLogLines(join(dataDir, 'findings.jsonl'))) {
    const f = parse<FindingRow & { record_kind?: string }>(line);
    if (f === undefined || f.subject?.trajectory_key !== trajectory.key) continue;
    if (f.record_kind !== undefined) {
      if (f.record_kind === MANIFEST_RECORD_KIND && f.subject.revision === trajectory.revision) manifest = f as unknown as ManifestRow;
      continue;
    }
    if ((f.subject.revision ?? 1) > trajectory.revision) continue;
    const seen = findings.get(f.finding_id);
    if (seen === undefined || (f.subject.revision ?? 1) >= (seen.subject.revision ?? 1)) findings.set(f.finding_id, f);
  }
  return { kind: 'found', trajectory, findings: [...findings.values()], manifest };
}
