import { resolve } from 'node:path';
import { parseFlags } from './flags.ts';
import { resolveConfig } from './resolve-config.ts';
import { lookUpTrajectory } from './trajectory-log.ts';
import { trajectoryText } from './trajectory-text.ts';

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

export async function showCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, SHOW_HELP, { strings: ['data-dir', 'config'], positionals: true });
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  if (positionals.length !== 1 || positionals[0] === '') {
    process.stderr.write(`show: expected exactly one KEY\n\n${SHOW_HELP}`);
    return 2;
  }
  const config = await resolveConfig(values.config, [{ path: ['dataDir'], value: values['data-dir'], flag: '--data-dir' }]);
  const found = await lookUpTrajectory(resolve(config.dataDir), positionals[0]!);
  // No log is not "no such key": say which file is missing and what writes it.
  if (found.kind === 'no-log') {
    process.stderr.write(
      `show: no trajectory log at ${found.path}: serve (or replay --trajectories) writes it; is --data-dir the directory serve writes to?\n`,
    );
    return 1;
  }
  if (found.kind === 'no-match') {
    process.stderr.write(`show: ${found.why}\n`);
    return 1;
  }
  process.stdout.write(`${trajectoryText(found.trajectory, found.findings).join('\n')}\n`);
  return 0;
}
