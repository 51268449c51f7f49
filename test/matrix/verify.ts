/**
 * `trajwatch verify --data-dir D --config F --json [--kafka]` on one output of the matrix: its
 * exit code, the violations it printed (one JSON object each) and its summary.
 */
import { runCli } from '../helpers/cli.ts';
import type { Output } from './run.ts';

const VERIFY_BOUND_MS = 60_000;

/** Verify's summary object (`--json`, last line): each invariant with what it checked. */
export interface VerifySummary {
  kind: 'summary';
  ok: boolean;
  invariants: { id: string; checked: number; violations: number }[];
}

export interface Verified {
  code: number | null;
  violations: Record<string, unknown>[];
  /** Undefined when verify printed none (the test then fails on it). */
  summary: VerifySummary | undefined;
  /** Invariant id → records checked, for the test's report. */
  checked: Record<string, number>;
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
  const summary = rows.find((row) => row.kind === 'summary') as VerifySummary | undefined;
  const checked = Object.fromEntries((summary?.invariants ?? []).map((i) => [i.id, i.checked]));
  return { code: r.code, violations: rows.filter((row) => row.kind !== 'summary'), summary, checked, text };
}
