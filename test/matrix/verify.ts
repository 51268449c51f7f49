/**
 * `trajwatch verify --data-dir D --config F --json [--kafka]` on one output of the matrix: its
 * exit code, the violations it printed (one JSON object each) and its summary.
 */
import { runCli } from '../helpers/cli.ts';
import type { Output } from './run.ts';

const VERIFY_BOUND_MS = 60_000;

export interface Verified {
  code: number | null;
  violations: Record<string, unknown>[];
  summary: unknown;
  /** stdout and stderr, for the failure message. */
  text: string;
}

export async function verify(o: Output, options: { kafka: boolean }): Promise<Verified> {
  const args = ['verify', '--data-dir', o.dataDir, '--config', o.configPath, '--json', ...(options.kafka ? ['--kafka'] : [])];
  const r = await runCli(args, VERIFY_BOUND_MS);
  const text = `trajwatch ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`;
  if (/unknown command "verify"/.test(r.stderr)) throw new Error(`trajwatch verify does not exist in this build (Task C, branch h-verify):\n${text}`);
  const rows = r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        throw new Error(`trajwatch verify --json printed a line that is not JSON: ${l}\n${text}`);
      }
    });
  const summaries = rows.filter(isSummary);
  return { code: r.code, violations: rows.filter((row) => !isSummary(row)), summary: summaries.at(-1), text };
}

function isSummary(row: Record<string, unknown>): boolean {
  return row.summary !== undefined || row.kind === 'summary' || row.type === 'summary';
}
