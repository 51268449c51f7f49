import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A free loopback port (the OS picks it), so parallel runs do not collide. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface LlamaServer {
  baseUrl: string;
  stop(): Promise<void>;
}

/** llama-cpp-python's OpenAI-compatible server on one GGUF model, started and awaited (`Uvicorn running on`). */
export async function startLlamaServer(
  python: string,
  o: { model: string; alias: string; nCtx: number; threads: number; chatFormat?: string },
): Promise<LlamaServer> {
  const port = await freePort();
  const args = [
    '-m',
    'llama_cpp.server',
    '--model',
    o.model,
    '--model_alias',
    o.alias,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--n_ctx',
    String(o.nCtx),
    '--n_threads',
    String(o.threads),
  ];
  if (o.chatFormat !== undefined) args.push('--chat_format', o.chatFormat);
  const proc: ChildProcess = spawn('nice', [python, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  // Loading the model takes seconds on an idle machine and minutes on shared, busy cores.
  const startMs = 240_000;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`llama server did not start in ${startMs / 1000} s:\n${log}`)), startMs);
      const on = (c: Buffer) => {
        log += c.toString();
        if (log.length > 100_000) log = log.slice(-50_000);
        if (log.includes('Uvicorn running on')) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc.stdout!.on('data', on);
      proc.stderr!.on('data', on);
      proc.once('exit', (code) => reject(new Error(`llama server exited ${code}:\n${log}`)));
    });
  } catch (err) {
    // A server that did not come up is not left running.
    if (proc.exitCode === null) proc.kill('SIGKILL');
    throw err;
  }
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    async stop() {
      if (proc.exitCode !== null) return;
      // A generation a client walked away from may still run; uvicorn waits for it on SIGTERM.
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(killer);
    },
  };
}
