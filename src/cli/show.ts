import { join, resolve } from 'node:path';
import { parseFlags } from './flags.ts';
import { logFiles, readLogLines } from './local-log-files.ts';
import { resolveConfig } from './resolve-config.ts';
import { terminalSafe } from './terminal-text.ts';
import { type FindingRow, type TrajectoryRow, trajectoryText } from './trajectory-text.ts';
import { dataDirPaths } from '../core/data-dir.ts';

export const SHOW_HELP = `Usage: trajwatch show KEY [options]

Prints one trajectory as a readable timeline of its steps, with its findings marked under the
steps their evidence names, from the local logs of the data directory (trajectories.jsonl and
findings.jsonl, rotated segments included). KEY is the trajectory key (conversation or session
id, else trace id) or a prefix naming exactly one. The latest revision is shown.
Exit 0 when shown, 1 when no trajectory (or more than one) matches, 2 on a usage error.

Options:
  --data-dir DIR     data directory of a running or past serve (default ./data; env TRAJWATCH_DATA_DIR)
  --config FILE      configuration file (JSON or YAML)
  --help             this text
`;

const parse = <T>(line: string): T | undefined => {
  try {
    return JSON.parse(line) as T;
  } catch {
    return undefined;
  }
};

export async function showCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, SHOW_HELP, { strings: ['data-dir', 'config'], positionals: true });
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  if (positionals.length !== 1 || positionals[0] === '') {
    process.stderr.write(`show: expected exactly one KEY\n\n${SHOW_HELP}`);
    return 2;
  }
  const wanted = positionals[0]!;
  const config = await resolveConfig(values.config, [{ path: ['dataDir'], value: values['data-dir'], flag: '--data-dir' }]);
  const dataDir = resolve(config.dataDir);
  const { trajectories: trajectoriesPath, findings: findingsPath } = dataDirPaths(dataDir);

  // No log is not "no such key": say which file is missing and what writes it.
  if ((await logFiles(trajectoriesPath)).length === 0) {
    process.stderr.write(`show: no trajectory log at ${trajectoriesPath}: serve (or replay --trajectories) writes it; is --data-dir the directory serve writes to?\n`);
    return 1;
  }
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
  const matches = latest.has(wanted) ? [wanted] : [...latest.keys()].filter((k) => k.startsWith(wanted));
  if (matches.length !== 1) {
    const why =
      matches.length === 0
        ? `no trajectory with key ${terminalSafe(wanted)} (or starting with it) in ${trajectoriesPath} (${read} trajectory lines read)`
        : `${matches.length} trajectories start with ${terminalSafe(wanted)}: ${matches.slice(0, 10).map(terminalSafe).join(', ')}${matches.length > 10 ? ', ...' : ''}`;
    process.stderr.write(`show: ${why}\n`);
    return 1;
  }
  const trajectory = latest.get(matches[0]!)!;

  // Its findings, once each (by finding_id, the latest revision's copy), up to the revision shown.
  const findings = new Map<string, FindingRow>();
  for (const line of await readLogLines(findingsPath)) {
    const f = parse<FindingRow & { record_kind?: string }>(line);
    if (f === undefined || f.record_kind !== undefined || f.subject?.trajectory_key !== trajectory.key) continue;
    if ((f.subject.revision ?? 1) > trajectory.revision) continue;
    const seen = findings.get(f.finding_id);
    if (seen === undefined || (f.subject.revision ?? 1) >= (seen.subject.revision ?? 1)) findings.set(f.finding_id, f);
  }
  process.stdout.write(`${trajectoryText(trajectory, [...findings.values()]).join('\n')}\n`);
  return 0;
}
