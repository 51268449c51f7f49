/**
 * The installable package, as a user gets it: `npm pack` (which builds dist/ through
 * `prepack`), `npm install -g --prefix <empty temp dir>` of the tarball (dependencies from the
 * registry), then the installed `trajwatch` run from a directory outside the checkout on the
 * lowest Node the package's `engines` claims. That Node comes from the registry's `node`
 * package, cached under .cache/.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN_REPO_DIR, SHARED_ONLY_TRACE_IDS } from '../helpers/trail-corpus.ts';
import { waitForLines } from '../helpers/serve.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; engines: { node: string } };
/** `>=X.Y.Z`: the lowest Node claimed, which is the one these tests run the package on. */
const LOWEST = /^>=(\d+\.\d+\.\d+)$/.exec(pkg.engines.node)?.[1];
const FIXTURE = join(IN_REPO_DIR, '272cdc645b731837366576b37d40fb65.otlp.json.gz');

/** The `node` registry package at `version` under .cache (installed once). */
async function nodeAt(version: string): Promise<string> {
  const dir = join(ROOT, '.cache', `node-${version}`);
  const bin = join(dir, 'node_modules', '.bin');
  if (!existsSync(join(bin, 'node'))) {
    await mkdir(dir, { recursive: true });
    await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', dir, `node@${version}`], { timeout: 300_000 });
  }
  return bin;
}

describe(`the package: npm pack, npm install -g into an empty prefix, run on Node ${LOWEST ?? '(engines not ">=X.Y.Z")'}`, () => {
  let work: string;
  let tarball: string;
  let prefix: string;
  let env: NodeJS.ProcessEnv;
  let elsewhere: string;
  const children: ChildProcess[] = [];
  /** The installed binary, run from `elsewhere` (no checkout in sight) on the lowest claimed Node. */
  const trajwatch = (args: string[]) => run(join(prefix, 'bin', 'trajwatch'), args, { cwd: elsewhere, env, timeout: 60_000 });

  beforeAll(async () => {
    expect(LOWEST, `engines.node must be ">=X.Y.Z", got ${pkg.engines.node}`).toBeDefined();
    work = await mkdtemp(join(tmpdir(), 'trajwatch-package-'));
    const packed = await run('npm', ['pack', '--pack-destination', work], { cwd: ROOT, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
    tarball = join(work, packed.stdout.trim().split('\n').pop()!);
    prefix = join(work, 'prefix');
    await run('npm', ['install', '-g', '--no-audit', '--no-fund', '--prefix', prefix, tarball], { cwd: work, timeout: 300_000 });
    env = { ...process.env, PATH: [await nodeAt(LOWEST!), join(prefix, 'bin'), '/usr/bin', '/bin'].join(delimiter) };
    elsewhere = await mkdtemp(join(tmpdir(), 'trajwatch-elsewhere-'));
  }, 600_000);
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });

  it('ships compiled JavaScript, the bin, README and LICENSE only: no sources, tests or fixtures (no GAIA-derived trace)', async () => {
    const { stdout } = await run('tar', ['tzf', tarball]);
    const entries = stdout.trim().split('\n');
    for (const e of entries)
      expect(e, e).toMatch(
        /^package\/(bin\/trajwatch\.js|dist\/.+\.js|dist\/calibration\/label\/static\/[a-z-]+\.(html|css)|README\.md|LICENSE|package\.json)$/,
      );
    // The labeling page's static files, which tsc does not emit.
    expect(entries).toContain('package/dist/calibration/label/static/index.html');
    expect(entries).toContain('package/dist/cli/main.js');
    const installed = join(prefix, 'lib', 'node_modules', pkg.name);
    expect((await readdir(installed)).sort()).toEqual(['LICENSE', 'README.md', 'bin', 'dist', 'node_modules', 'package.json']);
    const { stdout: text } = await run('tar', ['xzOf', tarball]).catch(() => ({ stdout: '' }));
    for (const id of SHARED_ONLY_TRACE_IDS) expect(text).not.toContain(id);
  });

  it(`runs on the lowest Node the package claims (${pkg.engines.node})`, async () => {
    const { stdout } = await run('node', ['--version'], { env });
    expect(stdout.trim()).toBe(`v${LOWEST}`);
  });

  it('trajwatch --help', async () => {
    const { stdout } = await trajwatch(['--help']);
    expect(stdout).toMatch(/^trajwatch — a streaming analyzer/);
    for (const command of ['serve', 'replay', 'tail']) expect(stdout).toContain(command);
  });

  it('trajwatch replay of a fixture, from a directory outside the checkout', async () => {
    await trajwatch(['replay', FIXTURE, '--trajectories', 'trajectories.jsonl', '--findings', 'findings.jsonl']);
    const trajectories = (await readFile(join(elsewhere, 'trajectories.jsonl'), 'utf8')).trim().split('\n');
    expect(trajectories).toHaveLength(1);
    expect(JSON.parse(trajectories[0]!)).toMatchObject({ traceIds: ['272cdc645b731837366576b37d40fb65'] });
    const findings = (await readFile(join(elsewhere, 'findings.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { area?: string });
    expect(findings.filter((f) => f.area === 'error-output')).toHaveLength(2);
  });

  it('trajwatch serve takes OTLP/HTTP and stops on SIGTERM; trajwatch tail prints its findings', async () => {
    const dataDir = join(elsewhere, 'data');
    const child = spawn(join(prefix, 'bin', 'trajwatch'), ['serve', '--otlp-http', '127.0.0.1:0', '--otlp-grpc', '127.0.0.1:0', '--data-dir', dataDir], {
      cwd: elsewhere,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    for (let i = 0; i < 400 && !/listening on http:\/\/127\.0\.0\.1:\d+\//.test(out); i++) await new Promise((r) => setTimeout(r, 50));
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)\//.exec(out)?.[1];
    expect(url, out).toBeDefined();
    const body = JSON.stringify({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: '5b8efff798038103d269b633813fc60c',
                  spanId: 'eee19b7ec3c1b174',
                  name: 'execute_tool search',
                  kind: 1,
                  startTimeUnixNano: '1700000000000000000',
                  endTimeUnixNano: '1700000001000000000',
                  attributes: [
                    { key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } },
                    { key: 'gen_ai.tool.name', value: { stringValue: 'search' } },
                  ],
                  status: { code: 2, message: 'search failed: timeout' },
                },
              ],
            },
          ],
        },
      ],
    });
    const res = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    // The root closes its trajectory after the quiet period; a SIGTERM before that would leave
    // it to the write-ahead log for the next start (docs/reliability.md, "SIGTERM").
    const rows = await waitForLines<{ traceIds: string[] }>(join(dataDir, 'trajectories.jsonl'), (r) => r.length >= 1);
    expect(rows[0]!.traceIds).toEqual(['5b8efff798038103d269b633813fc60c']);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const { stdout } = await trajwatch(['tail', '--data-dir', dataDir, '--from-start', '--max', '1', '--timeout-ms', '5000']);
    const [finding] = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { area: string; subject: { trajectory_key: string } });
    expect(finding).toMatchObject({ area: 'error-output', subject: { trajectory_key: '5b8efff798038103d269b633813fc60c' } });
  });
});
