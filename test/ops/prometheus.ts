import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';

const run = promisify(execFile);
const SCRIPTS = new URL('../../scripts/setup/prometheus/', import.meta.url).pathname;
// Installing Debian's package (first run on a fresh machine) plus the ready wait.
const START_TIMEOUT_MS = 240_000;

/** A real Prometheus started by scripts/setup/prometheus/start.sh, scraping one target every second. */
export interface PrometheusProcess {
  url: string;
  dir: string;
  stop: () => Promise<void>;
}

/** What start.sh adds to a plain scraping Prometheus: a rule file, an Alertmanager, feature flags. */
export interface PrometheusOptions {
  rules?: string;
  alertmanager?: string;
  features?: readonly string[];
}

export async function startPrometheus(target: string, options: PrometheusOptions = {}): Promise<PrometheusProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-prom-'));
  const port = await freePort();
  const extra = [
    ...(options.rules === undefined ? [] : ['--rules', options.rules]),
    ...(options.alertmanager === undefined ? [] : ['--alertmanager', options.alertmanager]),
    ...(options.features ?? []).flatMap((f) => ['--feature', f]),
  ];
  const { stdout } = await run(join(SCRIPTS, 'start.sh'), ['--target', target, '--port', String(port), '--dir', dir, '--interval', '1s', ...extra], {
    timeout: START_TIMEOUT_MS,
  }).catch((err: Error & { stderr?: string }) => {
    // CI must see why Prometheus is missing rather than a quiet skip.
    throw new Error(`could not start Prometheus with scripts/setup/prometheus/start.sh: ${err.message}\n${err.stderr ?? ''}`);
  });
  const url = /url=(\S+)/.exec(stdout)?.[1];
  if (url === undefined) throw new Error(`start.sh printed no url:\n${stdout}`);
  return { url, dir, stop: async () => void (await run(join(SCRIPTS, 'stop.sh'), ['--dir', dir], { timeout: 30_000 })) };
}

/** One sample of an instant-query vector result. */
export interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** Runs an instant query through Prometheus's HTTP API; throws on a query error (e.g. bad PromQL). */
export async function instantQuery(prometheusUrl: string, expr: string): Promise<VectorSample[]> {
  const res = await fetch(`${prometheusUrl}/api/v1/query?${new URLSearchParams({ query: expr })}`);
  const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: VectorSample[] } };
  if (body.status !== 'success' || body.data === undefined) throw new Error(`query failed: ${expr}: ${body.error ?? res.status}`);
  if (body.data.resultType !== 'vector') throw new Error(`expected a vector from ${expr}, got ${body.data.resultType}`);
  return body.data.result;
}

/** Waits (bounded) until `expr` returns a sample whose value passes `ok`. */
export async function waitForQuery(prometheusUrl: string, expr: string, ok: (v: number) => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await instantQuery(prometheusUrl, expr);
    if (result.some((s) => ok(Number(s.value[1])))) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${expr}; last ${JSON.stringify(result)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Waits (bounded) until Prometheus has scraped `job` `count` more times from now on. */
export async function waitForScrapes(prometheusUrl: string, job: string, count: number, timeoutMs = 30_000): Promise<void> {
  let after = Date.now() / 1000;
  for (let i = 0; i < count; i++) {
    const since = after;
    await waitForQuery(prometheusUrl, `timestamp(up{job="${job}"})`, (t) => t > since, timeoutMs);
    after = Math.max(...(await instantQuery(prometheusUrl, `timestamp(up{job="${job}"})`)).map((s) => Number(s.value[1])));
  }
}
