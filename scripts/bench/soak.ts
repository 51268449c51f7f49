/**
 * Overload soak over loopback (issue 9, "Overload"):
 *
 *   npx node scripts/bench/soak.ts [--overload-seconds 30] [--factor 2] [--rss-ceiling-mb 400] [--max-buffered-mb 16] [--heap-mb 256]
 *
 * 1. Starts a real `trajwatch serve` with small memory bounds (`assembler.maxBufferedBytes`,
 *    `maxRetainedBytes`, `sinks.maxPendingBytes`) and a V8 heap limit (`--heap-mb`).
 * 2. Measures capacity: closed loop, 8 senders, 64-span OTLP/protobuf requests, for 8 s:
 *    spans acknowledged (200) per second.
 * 3. Overload: an open loop at `factor` × capacity for `overload-seconds`; reads serve's RSS from
 *    /proc every 100 ms.
 * 4. Waits until every trajectory has closed, then accounts: spans sent = acknowledged + refused
 *    (by the client's count of spans in 429/503 answers); acknowledged = serve's
 *    trajwatch_spans_received_total = steps in closed trajectories (trajwatch_trajectory_steps_sum);
 *    refused requests = trajwatch_otlp_requests_refused_total.
 * 5. Recovery: half capacity for 5 s must be acknowledged whole.
 * Prints a JSON summary; exits 1 when a check fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { syntheticRequest, syntheticRequestProto } from '../../bench/synthetic-spans.ts';
import { metricValue } from '../../test/reliability/agent-run.ts';

const { values } = parseArgs({
  options: {
    'overload-seconds': { type: 'string', default: '30' },
    factor: { type: 'string', default: '2' },
    'rss-ceiling-mb': { type: 'string', default: '400' },
    'max-buffered-mb': { type: 'string', default: '16' },
    'heap-mb': { type: 'string', default: '256' },
  },
});
const overloadSeconds = Number(values['overload-seconds']);
const factor = Number(values.factor);
const rssCeilingBytes = Number(values['rss-ceiling-mb']) * 1024 * 1024;
const maxBufferedBytes = Number(values['max-buffered-mb']) * 1024 * 1024;
const heapMb = Number(values['heap-mb']);

const SPANS_PER_REQUEST = 64;
const MEASURE_SECONDS = 8;
const MAX_IN_FLIGHT = 1_024;

// One template request (8 traces of 8 spans); each request gets fresh trace ids by overwriting
// the template's ids in place, so no span is a duplicate and the load generator stays cheap.
// The conversation id is dropped: it would join every request's traces into 8 session trajectories.
interface TemplateSpan {
  traceId: string;
  attributes: { key: string }[];
}
const templateRequest = syntheticRequest(SPANS_PER_REQUEST, 7) as { resourceSpans: { scopeSpans: { spans: TemplateSpan[] }[] }[] };
const templateSpans = templateRequest.resourceSpans[0]!.scopeSpans[0]!.spans;
for (const span of templateSpans) span.attributes = span.attributes.filter((a) => a.key !== 'gen_ai.conversation.id');
const template = Buffer.from(syntheticRequestProto(templateRequest));
const templateTraceIds = [...new Set(templateSpans.map((s) => s.traceId))];
const idOffsets = templateTraceIds.map((hex) => {
  const id = Buffer.from(hex, 'hex');
  const at: number[] = [];
  for (let i = template.indexOf(id); i >= 0; i = template.indexOf(id, i + 1)) at.push(i);
  return at;
});
const TRACES_PER_REQUEST = templateTraceIds.length;
let requestCounter = 0;
function nextBody(): Buffer {
  const body = Buffer.from(template);
  const n = ++requestCounter;
  idOffsets.forEach((offsets, t) => {
    for (const at of offsets) {
      body.writeUInt32BE(n, at + 8);
      body.writeUInt32BE(t + 1, at + 12);
    }
  });
  return body;
}

interface Serve {
  url: string;
  child: ChildProcess;
}

async function startServe(dataDir: string): Promise<Serve> {
  const configPath = join(dataDir, 'config.json');
  // Every memory bound small, so the soak shows they hold: buffered spans, retained closed
  // trajectories, and log bytes not yet durable.
  await writeFile(
    configPath,
    JSON.stringify({
      assembler: { maxBufferedBytes, maxRetainedBytes: maxBufferedBytes / 2, quietPeriodMs: 2_000, idleTimeoutMs: 5_000 },
      sinks: { maxPendingBytes: maxBufferedBytes / 2 },
    }),
  );
  const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
  const child = spawn(
    process.execPath,
    // V8 grows its heap lazily when the machine has memory to spare; a heap limit makes RSS
    // follow the live data, which trajwatch's bounds keep small (a bound that failed would crash here).
    [`--max-old-space-size=${heapMb}`, cli, 'serve', '--otlp-http', '127.0.0.1:0', '--otlp-grpc', '127.0.0.1:0', '--data-dir', dataDir, '--config', configPath],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on https?:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m !== null) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? 0 : Number(m[1]) * 1024;
}

interface Tally {
  sentSpans: number;
  ackedSpans: number;
  refusedSpans: number;
  statuses: Record<string, number>;
  refusedWithoutRetryAfter: number;
  errors: number;
}
const errorKinds: Record<string, number> = {};
const newTally = (): Tally => ({ sentSpans: 0, ackedSpans: 0, refusedSpans: 0, statuses: {}, refusedWithoutRetryAfter: 0, errors: 0 });

async function send(url: string, tally: Tally): Promise<void> {
  tally.sentSpans += SPANS_PER_REQUEST;
  try {
    const res = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: nextBody() });
    await res.arrayBuffer();
    tally.statuses[res.status] = (tally.statuses[res.status] ?? 0) + 1;
    if (res.status === 200) tally.ackedSpans += SPANS_PER_REQUEST;
    else if (res.status === 429 || res.status === 503) {
      tally.refusedSpans += SPANS_PER_REQUEST;
      if (res.headers.get('retry-after') === null) tally.refusedWithoutRetryAfter++;
    }
  } catch (err) {
    tally.errors++;
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    const key = cause?.code ?? cause?.message ?? (err as Error).message;
    errorKinds[key] = (errorKinds[key] ?? 0) + 1;
  }
}

async function closedLoop(url: string, seconds: number, senders: number): Promise<Tally> {
  const tally = newTally();
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: senders }, async () => {
      while (performance.now() < until) await send(url, tally);
    }),
  );
  return tally;
}

/** Sends at `spansPerSecond` regardless of answers (bounded in flight); returns when all answered. */
async function openLoop(url: string, seconds: number, spansPerSecond: number, onTick: () => void): Promise<Tally & { skipped: number }> {
  const tally = { ...newTally(), skipped: 0 };
  const start = performance.now();
  const requestsPerSecond = spansPerSecond / SPANS_PER_REQUEST;
  let issued = 0;
  let inFlight = 0;
  const pending = new Set<Promise<void>>();
  while (performance.now() - start < seconds * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * requestsPerSecond);
    while (issued < due) {
      issued++;
      if (inFlight >= MAX_IN_FLIGHT) {
        tally.skipped++;
        continue;
      }
      inFlight++;
      const p = send(url, tally).finally(() => {
        inFlight--;
        pending.delete(p);
      });
      pending.add(p);
    }
    onTick();
    await new Promise((r) => setTimeout(r, 10));
  }
  await Promise.all(pending);
  return tally;
}

async function scrape(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-soak-'));
const serve = await startServe(dataDir);
const pid = serve.child.pid!;
let maxRss = rssBytes(pid);
const sampler = setInterval(() => {
  maxRss = Math.max(maxRss, rssBytes(pid));
}, 100);

const measured = await closedLoop(serve.url, MEASURE_SECONDS, 8);
const capacitySpansPerSecond = Math.round(measured.ackedSpans / MEASURE_SECONDS);
const rssAfterMeasure = rssBytes(pid);

const targetRate = capacitySpansPerSecond * factor;
const overload = await openLoop(serve.url, overloadSeconds, targetRate, () => {
  maxRss = Math.max(maxRss, rssBytes(pid));
});
const maxRssOverload = maxRss;

// Let every trajectory close (quiet period, idle timeout) before accounting.
async function untilAllClosed(): Promise<string> {
  let text = await scrape(serve.url);
  const deadline = performance.now() + 30_000;
  while (metricValue(text, 'trajwatch_trajectories_open') > 0 && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    text = await scrape(serve.url);
  }
  return text;
}
await untilAllClosed();
const rssAfterDrain = rssBytes(pid);
const recovery = await openLoop(serve.url, 5, capacitySpansPerSecond / 2, () => {});
const metrics = await untilAllClosed();
const rssAfterRecovery = rssBytes(pid);
clearInterval(sampler);
const health = await fetch(`${serve.url}/healthz`).then(
  (r) => r.status,
  () => 0,
);
const exitCode = await new Promise<number | null>((resolve) => {
  serve.child.once('exit', (code) => resolve(code));
  serve.child.kill('SIGTERM');
});
await rm(dataDir, { recursive: true, force: true });

const sentSpans = measured.sentSpans + overload.sentSpans + recovery.sentSpans;
const ackedSpans = measured.ackedSpans + overload.ackedSpans + recovery.ackedSpans;
const refusedSpans = measured.refusedSpans + overload.refusedSpans + recovery.refusedSpans;
const refusedRequests = [measured, overload, recovery].reduce((n, t) => n + (t.statuses['503'] ?? 0) + (t.statuses['429'] ?? 0), 0);
const answeredRequests = [measured, overload, recovery].reduce((n, t) => n + Object.values(t.statuses).reduce((a, b) => a + b, 0), 0);
const notDeliveredSpans = (measured.errors + overload.errors + recovery.errors) * SPANS_PER_REQUEST;
const server = {
  requestsAnswered: metricValue(metrics, 'trajwatch_otlp_requests_total', { transport: 'http' }),
  spansReceived: metricValue(metrics, 'trajwatch_spans_received_total'),
  spansRefused: metricValue(metrics, 'trajwatch_spans_refused_total'),
  requestsRefused: metricValue(metrics, 'trajwatch_otlp_requests_refused_total'),
  requestsRefusedByReason: Object.fromEntries(
    ['max-buffered-bytes', 'max-open-trajectories', 'trajectory-log-backlog', 'findings-log-backlog'].map((r) => [
      r,
      metricValue(metrics, 'trajwatch_otlp_requests_refused_total', { reason: r }),
    ]),
  ),
  trajectoriesClosed: metricValue(metrics, 'trajwatch_trajectories_closed_total'),
  stepsInClosedTrajectories: metricValue(metrics, 'trajwatch_trajectory_steps_sum'),
  trajectoriesOpenAtEnd: metricValue(metrics, 'trajwatch_trajectories_open'),
  spansDeduplicated: metricValue(metrics, 'trajwatch_spans_deduplicated'),
};
const checks = {
  'rss under ceiling': maxRssOverload <= rssCeilingBytes,
  'excess answered 429/503': overload.refusedSpans > 0,
  'every refusal carries Retry-After': overload.refusedWithoutRetryAfter === 0,
  // A request whose connection never opened (kernel accept queue full) never reached serve; an
  // OTLP client retries it like any network error. Everything that reached serve was answered.
  'offered = acknowledged + refused + never connected': sentSpans === ackedSpans + refusedSpans + notDeliveredSpans,
  'every request that reached serve was answered and counted': answeredRequests === server.requestsAnswered,
  'recovery: no transport errors': recovery.errors === 0,
  'acknowledged = spans received (metrics)': ackedSpans === server.spansReceived,
  'acknowledged = steps in closed trajectories (processed)': ackedSpans === server.stepsInClosedTrajectories,
  'refused requests = requests refused (metrics)': refusedRequests === server.requestsRefused,
  'trajectories closed = traces sent acknowledged': server.trajectoriesClosed === (ackedSpans / SPANS_PER_REQUEST) * TRACES_PER_REQUEST,
  'recovery: all acknowledged': recovery.ackedSpans === recovery.sentSpans && recovery.sentSpans > 0,
  'healthy after': health === 200,
  'clean exit': exitCode === 0,
};
const mb = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10;
const summary = {
  config: {
    maxBufferedMiB: mb(maxBufferedBytes),
    heapLimitMiB: heapMb,
    rssCeilingMiB: mb(rssCeilingBytes),
    overloadSeconds,
    factor,
    spansPerRequest: SPANS_PER_REQUEST,
  },
  capacitySpansPerSecond,
  overload: { targetSpansPerSecond: targetRate, ...overload, achievedSpansPerSecond: Math.round(overload.sentSpans / overloadSeconds) },
  recovery,
  rssMiB: { afterMeasure: mb(rssAfterMeasure), maxDuringOverload: mb(maxRssOverload), afterDrain: mb(rssAfterDrain), afterRecovery: mb(rssAfterRecovery) },
  client: { sentSpans, ackedSpans, refusedSpans, notDeliveredSpans, refusedRequests, answeredRequests, errorKinds },
  server,
  checks,
};
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
process.exit(Object.values(checks).every(Boolean) ? 0 : 1);
