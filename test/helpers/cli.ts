import { spawn } from 'node:child_process';

const CLI = new URL('../../src/cli/main.ts', import.meta.url).pathname;

export interface CliOptions {
  /** Replaces the environment (default: the test's own). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Another script to run the same way instead of the CLI (e.g. `scripts/dev/demo.ts`). */
  entry?: string;
}

/** Runs the trajwatch CLI under the Node 24 that runs the tests; bounded by `timeoutMs`. */
export function runCli(args: string[], timeoutMs = 120_000, options: CliOptions = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.entry ?? CLI, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`trajwatch ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The path of the CLI's entry in src/, for tests that spawn it themselves (pipes, signals). */
export const CLI_PATH = CLI;
