// Renders a shipped dashboard with real data to a PNG without a Grafana server: starts
// `trajwatch serve` with the judge enabled and a real Prometheus (scripts/setup/prometheus), sends
// OTLP traffic for a while, queries Prometheus's HTTP API for every panel, draws the panels
// as HTML/SVG (html.ts) and screenshots the page with Debian's headless Chromium. The judge's
// LLM endpoint cannot run here: test/helpers/model-stand-in.ts stands in for it, and one
// question is certified through `trajwatch calibrate` against it, so alarms are real
// pipeline output (of a scripted model).
//
//   node scripts/docs/render-dashboard/render.ts [--dashboard coordinator-alarms.json] [--out docs/alarms-dashboard.png] [--seconds 120]
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { CLAIMS_DONE, GARBLED, calibrateWithStandIn, startModelStandIn } from '../../../test/helpers/model-stand-in.ts';
import { dashboardHtml, type PanelData, type SeriesData } from './html.ts';

const run = promisify(execFile);
const ROOT = new URL('../../../', import.meta.url).pathname;
const { values } = parseArgs({
  options: {
    dashboard: { type: 'string', default: 'coordinator-alarms.json' },
    out: { type: 'string', default: 'docs/alarms-dashboard.png' },
    seconds: { type: 'string', default: '120' },
  },
});
const seconds = Number(values.seconds);

interface DashboardJson {
  title: string;
  templating: { list: { name: string; allValue: string }[] };
  panels: {
    type: PanelData['type'];
    title: string;
    gridPos: PanelData['gridPos'];
    fieldConfig?: { defaults: { unit?: string; mappings?: { options: Record<string, { text: string; color: string }> }[] } };
    targets?: { expr: string; legendFormat?: string }[];
  }[];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function startServe(dataDir: string, config: Record<string, unknown>): Promise<{ url: string; stop: () => void }> {
  await writeFile(join(dataDir, 'config.json'), JSON.stringify({ assembler: { quietPeriodMs: 200 }, ...config }));
  const child = spawn(
    process.execPath,
    [join(ROOT, 'src/cli/main.ts'), 'serve', '--otlp-http', '127.0.0.1:0', '--data-dir', dataDir, '--config', join(dataDir, 'config.json')],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  return { url, stop: () => void child.kill('SIGTERM') };
}

const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const AGENTS: Record<string, readonly string[]> = {
  'checkout-agent': ['refund-planner', 'cart-helper'],
  'support-agent': ['ticket-triage', 'faq-bot'],
  'billing-agent': ['invoice-writer'],
};

/**
 * One agent run from one of three services: an agent span over a few tool calls, some
 * failing, some repeated. About one run in four claims it is done (the stand-in judge answers
 * yes to the certified question: an alarm); a few get an answer the judge cannot parse.
 */
function agentRun(): string {
  const traceId = hex(32);
  const service = pick(Object.keys(AGENTS));
  const rootId = hex(16);
  const claim = Math.random() < 0.25 ? `, ${CLAIMS_DONE}` : Math.random() < 0.05 ? `, ${GARBLED}` : '';
  const calls = 1 + Math.floor(Math.random() * 4);
  const root = {
    traceId,
    spanId: rootId,
    name: 'invoke_agent',
    startTimeUnixNano: '500',
    endTimeUnixNano: String(2_000 + calls * 1_000),
    status: { code: 1 },
    attributes: [
      { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } },
      { key: 'gen_ai.agent.name', value: { stringValue: pick(AGENTS[service]!) } },
    ],
  };
  const tools = Array.from({ length: calls }, (_, i) => {
    const failing = Math.random() < 0.35;
    return {
      traceId,
      spanId: hex(16),
      parentSpanId: rootId,
      name: 'execute_tool lookup',
      startTimeUnixNano: String(1_000 + i * 1_000),
      endTimeUnixNano: String(1_500 + i * 1_000),
      status: failing ? { code: 2, message: 'upstream 503' } : { code: 1 },
      attributes: [
        { key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } },
        { key: 'gen_ai.tool.name', value: { stringValue: i % 2 === 0 ? 'lookup' : 'send_email' } },
        { key: 'gen_ai.tool.call.arguments', value: { stringValue: Math.random() < 0.5 ? '{"q":1}' : `{"q":${i}}` } },
        ...(failing ? [] : [{ key: 'gen_ai.tool.call.result', value: { stringValue: `result ${i}${i === calls - 1 ? claim : ''}` } }]),
      ],
    };
  });
  const spans = [root, ...tools];
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans }] }] });
}

async function query(
  prom: string,
  path: string,
  params: Record<string, string>,
): Promise<{ metric: Record<string, string>; value?: [number, string]; values?: [number, string][] }[]> {
  const res = await fetch(`${prom}/api/v1/${path}?${new URLSearchParams(params)}`);
  const body = (await res.json()) as { status: string; error?: string; data: { result: never[] } };
  if (body.status !== 'success') throw new Error(`${params.query}: ${body.error}`);
  return body.data.result;
}

const legendName = (format: string | undefined, metric: Record<string, string>) =>
  format === undefined
    ? Object.entries(metric)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ') || 'value'
    : format.replace(/\{\{(\w+)\}\}/g, (_, k: string) => metric[k] ?? '');

async function panelData(prom: string, d: DashboardJson, p: DashboardJson['panels'][number], start: number, end: number): Promise<PanelData> {
  const expand = (e: string) =>
    e.replace(
      /\$(\w+)/g,
      (_, name: string) => ({ __rate_interval: '15s', __range: `${end - start}s` })[name] ?? d.templating.list.find((v) => v.name === name)?.allValue ?? '',
    );
  const mappings = Object.fromEntries(
    Object.entries(p.fieldConfig?.defaults.mappings?.[0]?.options ?? {}).map(([k, v]) => [k, { text: v.text, color: v.color }]),
  );
  const out: PanelData = { type: p.type, title: p.title, gridPos: p.gridPos, unit: p.fieldConfig?.defaults.unit, mappings, series: [] };
  for (const t of p.targets ?? []) {
    if (p.type === 'timeseries') {
      const r = await query(prom, 'query_range', { query: expand(t.expr), start: String(start), end: String(end), step: '2' });
      out.series.push(...r.map((s): SeriesData => ({ name: legendName(t.legendFormat, s.metric), points: s.values!.map(([ts, v]) => [ts, Number(v)]) })));
    } else {
      const r = await query(prom, 'query', { query: expand(t.expr), time: String(end) });
      out.series.push(...r.map((s): SeriesData => ({ name: legendName(t.legendFormat, s.metric), points: [[s.value![0], Number(s.value![1])]] })));
      if (p.type === 'table') {
        const columns = [...new Set(r.flatMap((s) => Object.keys(s.metric)))];
        out.table = { columns: [...columns, 'Value'], rows: r.map((s) => [...columns.map((c) => s.metric[c] ?? ''), Number(s.value![1]).toFixed(0)]) };
      }
    }
  }
  return out;
}

const dashboard = JSON.parse(await readFile(join(ROOT, 'dashboards/json', values.dashboard!), 'utf8')) as DashboardJson;
const work = await mkdtemp(join(tmpdir(), 'trajwatch-render-'));
const model = await startModelStandIn();
const judge = {
  enabled: true,
  client: {
    baseUrl: model.baseUrl,
    model: 'judge',
    apiKeyEnv: null,
    retries: 0,
    pricing: { inputPerMillionTokens: 0.5, outputPerMillionTokens: 1.5, currency: 'USD' },
  },
  sampling: { rate: 0 },
  // The stand-in answers at once: a budget that judges every window of this traffic.
  budget: { callsPerMinute: 2_000, maxConcurrent: 8 },
};
const certificatesDir = await calibrateWithStandIn(judge);
const serve = await startServe(work, { judge: { ...judge, certificatesDir } });
const promPort = await freePort();
const { stdout } = await run(join(ROOT, 'scripts/setup/prometheus/start.sh'), [
  '--target',
  serve.url.replace('http://', ''),
  '--port',
  String(promPort),
  '--dir',
  join(work, 'prom'),
]);
const prom = /url=(\S+)/.exec(stdout)![1]!;
try {
  const start = Math.floor(Date.now() / 1000);
  process.stdout.write(`render: sending traffic for ${seconds} s\n`);
  while (Date.now() / 1000 < start + seconds) {
    const burst = 1 + Math.floor(Math.random() * 6 * (1 + Math.sin(Date.now() / 15_000)));
    for (let i = 0; i < burst; i++)
      await fetch(`${serve.url}/v1/traces`, { method: 'POST', body: agentRun(), headers: { 'content-type': 'application/json' } });
    if (Math.random() < 0.2) await fetch(`${serve.url}/v1/traces`, { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } });
    await new Promise((r) => setTimeout(r, 1_000));
  }
  await new Promise((r) => setTimeout(r, 3_000));
  const end = Math.floor(Date.now() / 1000);
  const panels = await Promise.all(dashboard.panels.map((p) => panelData(prom, dashboard, p, start, end)));
  const html = dashboardHtml(
    dashboard.title,
    `real data: Prometheus scraping trajwatch serve (judge: a scripted stand-in model, one question certified by trajwatch calibrate), ${new Date(start * 1000).toISOString().slice(0, 16)}Z + ${end - start} s`,
    panels,
  );
  const htmlPath = join(work, 'dashboard.html');
  await writeFile(htmlPath, html);
  const height = Math.max(...dashboard.panels.map((p) => (p.gridPos.y + p.gridPos.h) * 30)) + 70;
  const out = join(ROOT, values.out!);
  await mkdir(join(out, '..'), { recursive: true });
  await run(
    'chromium',
    ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', `--window-size=${24 * 66 + 8},${height}`, `--screenshot=${out}`, `file://${htmlPath}`],
    { timeout: 60_000 },
  );
  process.stdout.write(`render: wrote ${values.out}\n`);
} finally {
  await run(join(ROOT, 'scripts/setup/prometheus/stop.sh'), ['--dir', join(work, 'prom')]);
  serve.stop();
  await model.close();
}
