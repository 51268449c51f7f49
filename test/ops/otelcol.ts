import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BUILD_SCRIPT = new URL('../../scripts/setup/otelcol/build.sh', import.meta.url).pathname;
/** A cold build (builder install, module download, compile) took about 8 minutes on 2 cores. */
export const BUILD_TIMEOUT_MS = 900_000;
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

/**
 * Builds the Collector with scripts/setup/otelcol/build.sh (or another build script, e.g. the peer
 * benchmark's bench/otelcol/build.sh) when needed; resolves with the binary.
 */
export async function ensureCollector(script = BUILD_SCRIPT): Promise<string> {
  const { stdout } = await run(script, [], { timeout: BUILD_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }).catch((err: Error & { stderr?: string }) => {
    throw new Error(`could not build the Collector with ${script}: ${err.message}\n${err.stderr?.slice(-4000) ?? ''}`);
  });
  const bin = stdout.trim().split('\n').at(-1);
  if (bin === undefined || bin === '') throw new Error('build.sh printed no binary path');
  return bin;
}

/**
 * A shipped config with its compose host names and ports replaced by loopback ones, so the
 * test runs exactly the shipped file apart from addresses. Throws when a replaced string is
 * not in the file (the config changed and the test would silently run something else).
 */
export function renderConfig(text: string, replacements: Record<string, string>): string {
  let out = text;
  for (const [from, to] of Object.entries(replacements)) {
    if (!out.includes(from)) throw new Error(`config does not contain ${JSON.stringify(from)}`);
    out = out.replaceAll(from, to);
  }
  return out;
}

export interface CollectorProcess {
  child: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts the Collector with `configText` and waits (bounded) until it says it is ready. */
export async function startCollector(bin: string, configText: string): Promise<CollectorProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-otelcol-'));
  const configPath = join(dir, 'config.yaml');
  await writeFile(configPath, configText);
  const child = spawn(bin, ['--config', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Collector not ready within ${READY_TIMEOUT_MS} ms:\n${out}`)), READY_TIMEOUT_MS);
    const onData = () => {
      if (out.includes('Everything is ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Collector exited with ${code} before ready:\n${out}`));
    });
  }).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  return { child, output: () => out, stop };
}
