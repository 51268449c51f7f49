/**
 * The shipped scrape job for a trajwatch with auth on (deploy/prometheus/scrape-trajwatch-auth.yml)
 * run by a real Prometheus against a real serve: with the token in its credentials file the
 * target is up; with a wrong one it is down, refused with 401.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { freePort } from './free-port.ts';
import { waitForQuery } from './prometheus.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const TOKEN = 'scrape-auth-token-7e8f9a0b1c2d';

interface ScrapeJob {
  job_name: string;
  scrape_interval?: string;
  authorization: { type: string; credentials_file: string };
  static_configs: { targets: string[] }[];
}

describe('the shipped scrape job for trajwatch with auth on, in a real Prometheus', () => {
  let serve: ServeProcess;
  let dir: string;
  const prometheus: ChildProcess[] = [];

  beforeAll(async () => {
    // promtool and prometheus come from Debian's package (installed when missing).
    await promisify(execFile)(join(ROOT, 'scripts/setup/prometheus/install.sh'), [], { timeout: 240_000 });
    dir = await mkdtemp(join(tmpdir(), 'trajwatch-scrape-auth-'));
    await writeFile(join(dir, 'token'), `${TOKEN}\n`);
    await writeFile(join(dir, 'wrong-token'), 'not-the-token\n');
    await writeFile(join(dir, 'serve-token'), TOKEN);
    serve = await startServe({ receiver: { auth: { tokenFile: join(dir, 'serve-token') } } });
  }, 300_000);
  afterAll(async () => {
    for (const p of prometheus) p.kill('SIGTERM');
    expect(await serve.stop()).toBe(0);
  });

  /** The shipped job, with only its target and credentials file pointed at this test's. */
  async function startWith(tokenFile: string): Promise<string> {
    const shipped = parse(await readFile(join(ROOT, 'deploy/prometheus/scrape-trajwatch-auth.yml'), 'utf8')) as { scrape_configs: ScrapeJob[] };
    expect(shipped.scrape_configs.map((j) => j.job_name)).toEqual(['trajwatch']);
    const job = shipped.scrape_configs[0]!;
    expect(job.authorization).toEqual({ type: 'Bearer', credentials_file: '/run/secrets/trajwatch-token' });
    job.authorization.credentials_file = tokenFile;
    job.static_configs = [{ targets: [`127.0.0.1:${serve.port}`] }];
    job.scrape_interval = '1s';
    const config = join(dir, `prometheus-${prometheus.length}.yml`);
    await writeFile(config, stringify({ scrape_configs: [job] }));
    const port = await freePort();
    const child = spawn(
      'prometheus',
      [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, `tsdb-${prometheus.length}`)}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: 'ignore' },
    );
    prometheus.push(child);
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200; i++) {
      if (
        await fetch(`${url}/-/ready`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return url;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('Prometheus did not become ready');
  }

  it('scrapes /metrics with the token from the credentials file: the target is up', async () => {
    const url = await startWith(join(dir, 'token'));
    await waitForQuery(url, 'up{job="trajwatch"}', (v) => v === 1);
    await waitForQuery(url, 'trajwatch_process_start_time_seconds{job="trajwatch"} or process_start_time_seconds{job="trajwatch"}', (v) => v > 0);
  });

  it('with a wrong token the target is down: serve refused the scrape with 401', async () => {
    const url = await startWith(join(dir, 'wrong-token'));
    await waitForQuery(url, 'up{job="trajwatch"}', (v) => v === 0);
    const targets = (await fetch(`${url}/api/v1/targets`).then((r) => r.json())) as { data: { activeTargets: { lastError: string }[] } };
    expect(targets.data.activeTargets.map((t) => t.lastError)).toEqual([expect.stringMatching(/401 Unauthorized/)]);
  });
});
