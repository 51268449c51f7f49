/**
 * The README's five-minute calibration walkthrough, step by step through the real commands,
 * on a real small model: `npm run model` (llama.cpp's server on SmolLM2-135M), serve with
 * `examples/judge-local.yaml`, `npm run demo -- --judge`, `trajwatch label` (its API, as the
 * page uses it), `trajwatch calibrate` (the gate refusing, and why) and `trajwatch tail
 * --alarms` (nothing: no certificate, no alarm). The only change to the example file is the
 * model server's port (a free one, so runs do not collide).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { freePort } from '../judge/llama-server.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = join(ROOT, 'src/cli/main.ts');
const SMOL = join(ROOT, '.cache/llama-server/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf');
const PYTHON = join(ROOT, '.cache/llama-server/venv/bin/python');
const why =
  existsSync(PYTHON) && existsSync(SMOL) ? null : `no llama.cpp server venv or SmolLM2 model in .cache/llama-server (run scripts/setup/llama-server-env.sh)`;
if (why !== null && process.env.TRAJWATCH_REQUIRE_LLAMA === '1') throw new Error(why);

interface Proc {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the first match of `re` in the output (bounded), else rejects with the output. */
  waitFor: (re: RegExp, ms: number) => Promise<RegExpExecArray>;
  stop: () => Promise<void>;
}

function start(command: string, args: string[], env: Record<string, string> = {}): Proc {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    child,
    output: () => out,
    waitFor: (re, ms) =>
      new Promise((resolve, reject) => {
        const deadline = Date.now() + ms;
        const poll = setInterval(() => {
          const m = re.exec(out);
          if (m !== null || child.exitCode !== null || Date.now() > deadline) {
            clearInterval(poll);
            if (m !== null) resolve(m);
            else reject(new Error(`no ${re} in the output (${child.exitCode === null ? 'timed out' : `exited ${child.exitCode}`}):\n${out.slice(-3000)}`));
          }
        }, 100);
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

describe.skipIf(why !== null)(`the calibration walkthrough on a real small model${why === null ? '' : ` (skipped: ${why})`}`, () => {
  const procs: Proc[] = [];
  let dir: string;
  let dataDir: string;
  let config: string;
  let otlp: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'trajwatch-walkthrough-'));
    dataDir = join(dir, 'data');
    const modelPort = await freePort();
    // 1. npm run model (the script itself: it checks the venv and the model, then serves)
    const model = start('bash', ['scripts/dev/model.sh'], { TRAJWATCH_MODEL_PORT: String(modelPort) });
    procs.push(model);
    await model.waitFor(/Uvicorn running on/, 240_000);
    expect(model.output()).toContain(`serving ${SMOL} as "smollm2-135m-instruct-q4_1" at http://127.0.0.1:${modelPort}/v1`);
    // 2. serve --config examples/judge-local.yaml (the model's port is the only change)
    const example = await readFile(join(ROOT, 'examples/judge-local.yaml'), 'utf8');
    expect(example).toContain('baseUrl: http://127.0.0.1:8080/v1');
    config = join(dir, 'judge-local.yaml');
    await writeFile(config, example.replaceAll('127.0.0.1:8080', `127.0.0.1:${modelPort}`));
    const serve = start(process.execPath, [
      CLI,
      'serve',
      '--config',
      config,
      '--data-dir',
      dataDir,
      '--otlp-http',
      '127.0.0.1:0',
      '--otlp-grpc',
      '127.0.0.1:0',
    ]);
    procs.push(serve);
    const listening = await serve.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)\//, 60_000);
    otlp = listening[1]!;
  }, 300_000);

  afterAll(async () => {
    for (const p of procs.reverse()) await p.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('serve names the judge it uses at start; demo --judge waits for its answers and says what to do next', async () => {
    expect(procs[1]!.output()).toMatch(/judge.*smollm2-135m-instruct-q4_1/);
    const demo = await runCli(['--endpoint', otlp, '--judge', '--runs', '2', '--data-dir', dataDir, '--wait-ms', '480000'], 500_000, {
      entry: join(ROOT, 'scripts/dev/demo.ts'),
    });
    console.log(`[walkthrough] demo --judge:\n${demo.stdout}`);
    expect(demo.code, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/window w1_[0-9a-f]{24}: judged/);
    // The model answered: no window was judged by a transport failure (an unreachable or failing server).
    expect(demo.stdout).not.toMatch(/: judged \((network|timeout|http)/);
    expect(demo.stdout).toMatch(/the judge answered [12] of the runs' windows/);
    expect(demo.stdout).toContain(`label --data-dir ${dataDir}`);
  }, 520_000);

  it('label serves the judged windows; a label per question is recorded and shows the judge answer after it', async () => {
    const label = start(process.execPath, [CLI, 'label', '--data-dir', dataDir, '--port', '0']);
    procs.push(label);
    const url = (await label.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/)/, 30_000))[1]!;
    const list = (await (await fetch(new URL('/api/windows?labeler=walkthrough', url))).json()) as { windows: { windowId: string; questions: number }[] };
    expect(list.windows.length).toBeGreaterThan(0);
    let recorded = 0;
    for (const w of list.windows) {
      const detail = (await (await fetch(new URL(`/api/windows/${w.windowId}?labeler=walkthrough`, url))).json()) as {
        questions: { id: string; judge: unknown }[];
      };
      expect(detail.questions.length).toBe(w.questions);
      for (const q of detail.questions) {
        expect(q.judge).toBe('hidden');
        const res = await fetch(new URL('/api/labels', url), {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: new URL(url).origin },
          body: JSON.stringify({ windowId: w.windowId, questionId: q.id, label: 'no', support: null, labeler: 'walkthrough' }),
        });
        expect(res.status, await res.clone().text()).toBe(201);
        expect(((await res.json()) as { judge: unknown }).judge).not.toBe('hidden');
        recorded++;
      }
    }
    expect(recorded).toBeGreaterThanOrEqual(8);
    await label.stop();
  }, 120_000);

  it('calibrate reports the agreement and writes no certificate, saying why; tail --alarms prints no alarm', async () => {
    const calibrate = await runCli(['calibrate', '--data-dir', dataDir], 60_000);
    console.log(`[walkthrough] calibrate:\n${calibrate.stdout}`);
    expect(calibrate.code, calibrate.stderr).toBe(0);
    expect(calibrate.stdout).toContain('no certificate written');
    // A handful of labels cannot reach the kappa bound: the report says how far short it is.
    expect(calibrate.stdout).toMatch(/kappa/i);
    const tail = await runCli(['tail', '--alarms', '--from-start', '--data-dir', dataDir, '--timeout-ms', '2000', '--format', 'json'], 30_000);
    expect(tail.code, tail.stderr).toBe(0);
    expect(tail.stdout).toBe('');
  }, 120_000);
});
