import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLI = new URL('../../src/cli/main.ts', import.meta.url).pathname;

/** A real `trajwatch serve` process on a free loopback port, with its own data directory. */
export interface ServeProcess {
  url: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  output: () => string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop: () => Promise<number | null>;
}

export async function startServe(config: Record<string, unknown> = {}, extraArgs: string[] = []): Promise<ServeProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-test-'));
  const configPath = join(dataDir, 'config.json');
  await writeFile(configPath, JSON.stringify({ assembler: { quietPeriodMs: 200 }, ...config }));
  // process.execPath is the Node 24 that runs the tests (from the `node` devDependency).
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--otlp-http', '127.0.0.1:0', '--otlp-grpc', '127.0.0.1:0', '--data-dir', dataDir, '--config', configPath, ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      // The caller gets no handle to stop it: not left running.
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within 20 s:\n${out}`));
    }, 20_000);
    const onData = () => {
      const m = /listening on https?:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening:\n${out}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    child,
    output: () => out,
    stop: () =>
      new Promise((resolve) => {
        // Already gone: ended by itself (exit code) or killed by a test (signal).
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

/** Reads a JSON-lines file, waiting (bounded) until `until` accepts its rows. */
export async function waitForLines<T = Record<string, unknown>>(path: string, until: (rows: T[]) => boolean, timeoutMs = 15_000): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  let rows: T[] = [];
  for (;;) {
    try {
      const text = await readFile(path, 'utf8');
      rows = text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as T);
    } catch {
      rows = [];
    }
    if (until(rows)) return rows;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${path}; have ${rows.length} rows`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
