// Every shipped dashboard query, run against a real Prometheus that scrapes a real
// `trajwatch serve` fed with real OTLP traffic.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';
import { instantQuery, type PrometheusProcess, startPrometheus, waitForScrapes } from './prometheus.ts';
import { panelQueries, readShippedDashboards } from './shipped-dashboards.ts';

/**
 * Metrics the dashboards already chart but trajwatch does not export yet (being added in
 * parallel). Panels over them must return nothing today; once a metric appears, the
 * "still missing" test fails so that it is removed from here and its panels are held to
 * returning series like every other panel.
 */
const MISSING_METRICS: readonly string[] = [
  'trajwatch_sink_records_total', // registered, but nothing increments it yet
  'trajwatch_kafka_produce_seconds', // Kafka sink
  'trajwatch_kafka_produce_errors_total', // Kafka sink
  'trajwatch_windows_total', // windows
  'trajwatch_judge_calls_total', // judge
  'trajwatch_judge_latency_seconds', // judge
  'trajwatch_judge_tokens_total', // judge
  'trajwatch_judge_cost_usd_total', // judge
  'trajwatch_judge_failures_total', // judge
  'trajwatch_judge_budget_remaining', // judge
  'trajwatch_decisions_total', // decision points
  'trajwatch_coordinator_alarms_total', // coordinator
  'trajwatch_calibration_certified', // calibration
];

// A histogram is referenced through its _bucket/_sum/_count series.
const seriesPattern = (metric: string) => `${metric}(_bucket|_sum|_count)?`;
const missingIn = (expr: string) => MISSING_METRICS.filter((m) => new RegExp(`\\b${seriesPattern(m)}\\b`).test(expr));

const TRACES = ['4bf92f3577b34da6a3ce929d0e0e4736', '5bf92f3577b34da6a3ce929d0e0e4737', '6bf92f3577b34da6a3ce929d0e0e4738'];

function request(spans: unknown[], service = 'checkout-agent') {
  return JSON.stringify({
    resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans }] }],
  });
}

function toolSpan(traceId: string, spanId: string, ok: boolean) {
  return {
    traceId,
    spanId,
    name: 'execute_tool lookup',
    startTimeUnixNano: '1000',
    endTimeUnixNano: '2000',
    status: ok ? { code: 1 } : { code: 2, message: 'lookup failed: upstream 503' },
    attributes: [
      { key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } },
      { key: 'gen_ai.tool.name', value: { stringValue: 'lookup' } },
      { key: 'gen_ai.tool.call.arguments', value: { stringValue: '{"q":"order 42"}' } },
    ],
  };
}

const shipped = readShippedDashboards();
const queries = panelQueries(shipped);
const variables = shipped.flatMap((d) => d.json.templating.list.map((v) => ({ dashboard: d.file, ...v })));

describe('dashboards against a real Prometheus scraping a real trajwatch', () => {
  let serve: ServeProcess;
  let prom: PrometheusProcess | undefined;

  beforeAll(async () => {
    serve = await startServe();
    prom = await startPrometheus(`127.0.0.1:${serve.port}`);
    const post = (body: string, type = 'application/json') =>
      fetch(`${serve.url}/v1/traces`, { method: 'POST', body, headers: { 'content-type': type } });
    // A failing tool called twice with the same arguments (L0 hit, repetition), a clean
    // trajectory, one span refused inside an accepted request, a 400 and a 415.
    const [failing, clean, partial] = TRACES as [string, string, string];
    expect((await post(request([toolSpan(failing, '00f067aa0ba902b1', false), toolSpan(failing, '00f067aa0ba902b2', false)]))).status).toBe(200);
    expect((await post(request([toolSpan(clean, '00f067aa0ba902b3', true)], 'support-agent'))).status).toBe(200);
    expect((await post(request([toolSpan(partial, '00f067aa0ba902b4', true), toolSpan(partial, '0000000000000000', true)]))).status).toBe(200);
    expect((await post('garbage')).status).toBe(400);
    expect((await post('x', 'text/plain')).status).toBe(415);
    await waitForLines(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.length === TRACES.length);
    // Two scrapes after the traffic settled: every series then has at least two samples, so
    // rate() and increase() see it.
    await waitForScrapes(prom.url, 'trajwatch', 2);
  }, 300_000);

  afterAll(async () => {
    await prom?.stop();
    await serve?.stop();
  });

  it('scrapes trajwatch (up == 1) and sees the traffic', async () => {
    const up = await instantQuery(prom!.url, 'up{job="trajwatch"}');
    expect(up.map((s) => s.value[1])).toEqual(['1']);
    const spans = await instantQuery(prom!.url, 'sum(trajwatch_spans_received_total)');
    expect(Number(spans[0]?.value[1])).toBe(4);
  });

  it('has panel queries to check (the dashboards were generated)', () => {
    expect(queries.length).toBeGreaterThan(20);
  });

  it.each(queries.map((q) => [`${q.dashboard} / ${q.panel} / ${q.refId}`, q] as const))('%s returns series', async (_name, q) => {
    const result = await instantQuery(prom!.url, q.expr);
    const missing = missingIn(q.expr);
    if (missing.length > 0) {
      // Over a metric trajwatch does not export yet: nothing to show, and no error either.
      expect(result, `expected no series yet for ${q.expr}`).toEqual([]);
    } else {
      expect(result.length, `no series for ${q.expr}`).toBeGreaterThan(0);
    }
  });

  it.each(variables.map((v) => [`${v.dashboard} / $${v.name}`, v] as const))('%s lists label values', async (_name, v) => {
    const m = /^label_values\((\w+), (\w+)\)$/.exec(v.definition);
    expect(m, `unsupported variable query ${v.definition}`).not.toBeNull();
    const [, metric, label] = m as unknown as [string, string, string];
    const values = await instantQuery(prom!.url, `count by (${label}) (${metric})`);
    if (missingIn(metric).length > 0) expect(values).toEqual([]);
    else expect(values.length).toBeGreaterThan(0);
  });

  it.each(MISSING_METRICS.map((m) => [m]))('%s is still missing (remove it from MISSING_METRICS once it lands)', async (metric) => {
    expect(queries.some((q) => missingIn(q.expr).includes(metric)), `${metric} is charted by no panel`).toBe(true);
    const present = await instantQuery(prom!.url, `count({__name__=~"${seriesPattern(metric)}"})`);
    expect(present, `${metric} now has series: take it off MISSING_METRICS`).toEqual([]);
  });
});
