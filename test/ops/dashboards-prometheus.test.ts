// Every shipped dashboard query, run against a real Prometheus that scrapes a real
// `trajwatch serve` fed with real OTLP traffic, with the judge enabled and one question
// certified, so the coordinator-alarm panels chart real alarms. The judge's model endpoint
// is an LLM that cannot run here: an in-process Chat Completions server stands in for it
// (test/helpers/model-stand-in.ts). Findings also go to a real Kafka broker when one is available.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedServer } from '../judge/scripted-chat-server.ts';
import { kafkaForTests, uniqueTopic } from '../helpers/kafka.ts';
import { CERTIFIED_QUESTION, CLAIMS_DONE, GARBLED, calibrateWithStandIn, startModelStandIn } from '../helpers/model-stand-in.ts';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';
import { instantQuery, type PrometheusProcess, startPrometheus, waitForQuery, waitForScrapes } from './prometheus.ts';
import { panelQueries, readShippedDashboards } from './shipped-dashboards.ts';
import { metricNames, shippedRules } from './shipped-rules.ts';

const brokers = await kafkaForTests();

/**
 * Metrics the dashboards chart that this run cannot produce. Panels over them must return
 * nothing (and no error); once one has series, the "cannot be produced" test fails so that
 * it comes off this list. Only the Kafka sink's metrics, and only where no broker can run
 * (outside CI without Java: `kafkaForTests` says why); in CI a missing broker fails instead.
 */
const MISSING_METRICS: readonly string[] =
  brokers === undefined
    ? ['trajwatch_kafka_delivered_total', 'trajwatch_kafka_outbox_refused_total', 'trajwatch_kafka_produce_seconds', 'trajwatch_kafka_produce_errors_total']
    : [];

// A histogram is referenced through its _bucket/_sum/_count series.
const seriesPattern = (metric: string) => `${metric}(_bucket|_sum|_count)?`;
const missingIn = (expr: string) => MISSING_METRICS.filter((m) => new RegExp(`\\b${seriesPattern(m)}\\b`).test(expr));

const FAILING = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLEAN = '5bf92f3577b34da6a3ce929d0e0e4737';
const PARTIAL = '6bf92f3577b34da6a3ce929d0e0e4738';
const GARBLED_ANSWER = '9bf92f3577b34da6a3ce929d0e0e473b';
/** Two rounds of agent runs that claim completion, each raising an alarm in two services. */
const ALARM_ROUNDS = [
  ['7bf92f3577b34da6a3ce929d0e0e4739', '8bf92f3577b34da6a3ce929d0e0e473a'],
  ['abf92f3577b34da6a3ce929d0e0e473c', 'bbf92f3577b34da6a3ce929d0e0e473d'],
] as const;
const AGENT_RUNS = 1 + ALARM_ROUNDS.length * 2;
const TRAJECTORIES = 3 + AGENT_RUNS;

function request(spans: unknown[], service = 'checkout-agent') {
  return JSON.stringify({
    resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans }] }],
  });
}

function toolSpan(traceId: string, spanId: string, ok: boolean, over: { parent?: string; args?: string; result?: string } = {}) {
  return {
    traceId,
    spanId,
    ...(over.parent === undefined ? {} : { parentSpanId: over.parent }),
    name: 'execute_tool lookup',
    startTimeUnixNano: '1000',
    endTimeUnixNano: '2000',
    status: ok ? { code: 1 } : { code: 2, message: 'lookup failed: upstream 503' },
    attributes: [
      { key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } },
      { key: 'gen_ai.tool.name', value: { stringValue: 'lookup' } },
      { key: 'gen_ai.tool.call.arguments', value: { stringValue: over.args ?? '{"q":"order 42"}' } },
      ...(over.result === undefined ? [] : [{ key: 'gen_ai.tool.call.result', value: { stringValue: over.result } }]),
    ],
  };
}

/** An agent run: the named agent calls one tool and ends last (the judged turn's anchor). */
function agentRun(traceId: string, agent: string, tool: { args?: string; result: string }) {
  const root = traceId.slice(0, 16);
  return [
    {
      traceId,
      spanId: root,
      name: `invoke_agent ${agent}`,
      startTimeUnixNano: '500',
      endTimeUnixNano: '3000',
      status: { code: 1 },
      attributes: [
        { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } },
        { key: 'gen_ai.agent.name', value: { stringValue: agent } },
      ],
    },
    toolSpan(traceId, `${root.slice(0, 15)}1`, true, { parent: root, ...tool }),
  ];
}

const shipped = readShippedDashboards();
const queries = panelQueries(shipped);
// Query variables; a textbox ($trace_url) is typed by the operator and queries nothing.
const variables = shipped.flatMap((d) =>
  d.json.templating.list.filter((v) => v.type === 'query').map((v) => ({ dashboard: d.file, ...v, definition: v.definition ?? '' })),
);

describe('dashboards against a real Prometheus scraping a real trajwatch', () => {
  let serve: ServeProcess;
  let prom: PrometheusProcess | undefined;
  let model: ScriptedServer | undefined;

  beforeAll(async () => {
    model = await startModelStandIn();
    const judge = {
      enabled: true,
      client: {
        baseUrl: model.baseUrl,
        model: 'judge',
        apiKeyEnv: null,
        retries: 0,
        pricing: { inputPerMillionTokens: 0.5, outputPerMillionTokens: 1.5, currency: 'USD' },
      },
      // Judge the windows the triggers ask for (terminal turn, L0 hits, outbound), no random sample.
      sampling: { rate: 0 },
    };
    const certificatesDir = await calibrateWithStandIn(judge);
    const kafka =
      brokers === undefined
        ? {}
        : { kafka: { brokers, createTopics: true, topicPartitions: 1, topics: { findings: uniqueTopic('ops.findings'), alarms: uniqueTopic('ops.alarms') } } };
    serve = await startServe({ judge: { ...judge, certificatesDir }, ...kafka });
    // Exemplar storage on: Prometheus scrapes OpenMetrics and keeps each series' exemplars.
    prom = await startPrometheus(`127.0.0.1:${serve.port}`, { features: ['exemplar-storage'] });
    // Scraped once before any traffic: counters and histograms start from a sample, so rate() sees the first increase.
    await waitForScrapes(prom.url, 'trajwatch', 1);
    const post = (body: string, type = 'application/json') => fetch(`${serve.url}/v1/traces`, { method: 'POST', body, headers: { 'content-type': type } });
    // A failing tool called twice with the same arguments (L0 hit, repetition), a clean
    // trajectory, one span refused inside an accepted request, a 400 and a 415; an agent run
    // the stand-in garbles; agent runs that claim completion (alarms from two services and agents).
    expect((await post(request([toolSpan(FAILING, '00f067aa0ba902b1', false), toolSpan(FAILING, '00f067aa0ba902b2', false)]))).status).toBe(200);
    expect((await post(request([toolSpan(CLEAN, '00f067aa0ba902b3', true)], 'support-agent'))).status).toBe(200);
    expect((await post(request([toolSpan(PARTIAL, '00f067aa0ba902b4', true), toolSpan(PARTIAL, '0000000000000000', true)]))).status).toBe(200);
    expect((await post(request(agentRun(GARBLED_ANSWER, 'ticket-triage', { args: `{"note":"${GARBLED}"}`, result: 'ok' }), 'support-agent'))).status).toBe(200);
    expect((await post('garbage')).status).toBe(400);
    expect((await post('x', 'text/plain')).status).toBe(415);
    for (const [round, [checkout, support]] of ALARM_ROUNDS.entries()) {
      expect((await post(request(agentRun(checkout, 'refund-planner', { result: `refund issued, ${CLAIMS_DONE}` }), 'checkout-agent'))).status).toBe(200);
      expect((await post(request(agentRun(support, 'ticket-triage', { result: `ticket closed, ${CLAIMS_DONE}` }), 'support-agent'))).status).toBe(200);
      await waitForLines(join(serve.dataDir, 'alarms.jsonl'), (r) => r.length === 2 * (round + 1), 30_000);
      // An alarm series is born with its first alarm: the next round is what rate() and increase() see.
      await waitForScrapes(prom.url, 'trajwatch', 1);
    }
    await waitForLines(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.length === TRAJECTORIES);
    // Every judge call has ended (the garbled one is a failure) and, with a broker, Kafka acknowledged.
    await waitForQuery(prom.url, 'sum(trajwatch_judge_failures_total)', (v) => v >= 1);
    if (brokers !== undefined) await waitForQuery(prom.url, 'sum(trajwatch_kafka_delivered_total)', (v) => v >= 1, 60_000);
    // Two scrapes after the traffic settled: every series then has at least two samples, so
    // rate() and increase() see it.
    await waitForScrapes(prom.url, 'trajwatch', 2);
  }, 300_000);

  afterAll(async () => {
    await prom?.stop();
    await serve?.stop();
    await model?.close();
  });

  it('scrapes trajwatch (up == 1) and sees the traffic', async () => {
    const up = await instantQuery(prom!.url, 'up{job="trajwatch"}');
    expect(up.map((s) => s.value[1])).toEqual(['1']);
    const spans = await instantQuery(prom!.url, 'sum(trajwatch_spans_received_total)');
    // Four tool spans accepted in the first three trajectories, two spans per agent run.
    expect(Number(spans[0]?.value[1])).toBe(4 + 2 * AGENT_RUNS);
  });

  it('charts the coordinator alarms of the certified question by service and agent, and only it as certified', async () => {
    const alarms = await instantQuery(prom!.url, 'sum by (question, service, agent) (trajwatch_coordinator_alarms_total)');
    expect(alarms.map((s) => [s.metric.question, s.metric.service, s.metric.agent, s.value[1]]).sort()).toEqual([
      [CERTIFIED_QUESTION, 'checkout-agent', 'refund-planner', '2'],
      [CERTIFIED_QUESTION, 'support-agent', 'ticket-triage', '2'],
    ]);
    const inRange = await instantQuery(prom!.url, 'sum(increase(trajwatch_coordinator_alarms_total[10m]))');
    expect(Number(inRange[0]?.value[1])).toBeGreaterThan(0);
    const certified = await instantQuery(prom!.url, 'trajwatch_calibration_certified == 1');
    expect(certified.map((s) => s.metric.question)).toEqual([CERTIFIED_QUESTION]);
    const actions = await instantQuery(prom!.url, 'sum by (action) (trajwatch_decisions_total)');
    expect(actions.map((s) => s.metric.action).sort()).toEqual(['act', 'escalate', 'record']);
  });

  it('keeps exemplars on the alarm and findings counters: the trace and the finding behind the latest one', async () => {
    const alarms = await waitForLines<{ finding_id: string; subject: { trace_ids: string[] } }>(join(serve.dataDir, 'alarms.jsonl'), (r) => r.length === 4);
    const findings = await waitForLines<{ finding_id: string; subject: { trace_ids: string[] } }>(join(serve.dataDir, 'findings.jsonl'), (r) => r.length > 0);
    const exemplarsOf = async (query: string) => {
      const params = new URLSearchParams({ query, start: String(Date.now() / 1000 - 600), end: String(Date.now() / 1000 + 60) });
      const body = (await (await fetch(`${prom!.url}/api/v1/query_exemplars?${params}`)).json()) as {
        status: string;
        data: { seriesLabels: Record<string, string>; exemplars: { labels: Record<string, string> }[] }[];
      };
      expect(body.status).toBe('success');
      return body.data.flatMap((s) => s.exemplars.map((e) => ({ series: s.seriesLabels, trace_id: e.labels['trace_id'], finding_id: e.labels['finding_id'] })));
    };
    const alarmExemplars = await exemplarsOf('trajwatch_coordinator_alarms_total');
    // One series per (question, service, agent); each exemplar names a real alarm and its trace.
    expect(new Set(alarmExemplars.map((e) => e.series['service']))).toEqual(new Set(['checkout-agent', 'support-agent']));
    for (const e of alarmExemplars) {
      const alarm = alarms.find((a) => a.finding_id === e.finding_id);
      expect(alarm, `exemplar names alarm ${e.finding_id}`).toBeDefined();
      expect(alarm!.subject.trace_ids).toContain(e.trace_id);
      expect(ALARM_ROUNDS.flat() as readonly string[]).toContain(e.trace_id);
    }
    const findingExemplars = await exemplarsOf('trajwatch_findings_total');
    expect(findingExemplars.length).toBeGreaterThan(0);
    for (const e of findingExemplars) expect(findings.find((f) => f.finding_id === e.finding_id)?.subject.trace_ids).toContain(e.trace_id);
    // The plain text exposition (no OpenMetrics Accept) carries none, and says it is text.
    const plain = await fetch(`${serve.url}/metrics`);
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await plain.text();
    expect(text).toMatch(/^trajwatch_coordinator_alarms_total\{/m);
    expect(text).not.toContain('trace_id');
  });

  it('has series for every metric the shipped alerting rules select', async () => {
    // The Kafka source's series exist only when spans come from Kafka (serve runs the HTTP receiver here).
    const elsewhere = new Set(['trajwatch_kafka_source_spans_total']);
    // Without a broker (outside CI only) the Kafka sink's series cannot exist either.
    const kafkaOnly = (m: string) => brokers === undefined && (m.startsWith('trajwatch_kafka_') || m === 'trajwatch_sink_backlog_limit_records');
    const used = [...new Set(shippedRules().flatMap((r) => metricNames(r.expr)))].filter((m) => !elsewhere.has(m) && !kafkaOnly(m));
    expect(used.length).toBeGreaterThan(10);
    for (const metric of used) {
      const present = await instantQuery(prom!.url, `count({__name__="${metric}"})`);
      expect(present.length, `${metric} has no series in a real scrape`).toBe(1);
    }
  });

  it('has panel queries to check (the dashboards were generated)', () => {
    expect(queries.length).toBeGreaterThan(20);
  });

  it.each(queries.map((q) => [`${q.dashboard} / ${q.panel} / ${q.refId}`, q] as const))('%s returns series', async (_name, q) => {
    const result = await instantQuery(prom!.url, q.expr);
    const missing = missingIn(q.expr);
    if (missing.length > 0) {
      // Over a metric this run cannot produce: nothing to show, and no error either.
      expect(result, `expected no series yet for ${q.expr}`).toEqual([]);
    } else {
      expect(result.length, `no series for ${q.expr}`).toBeGreaterThan(0);
      // NaN is what a quantile over a histogram without observations gives: not data.
      expect(
        result.filter((s) => Number.isNaN(Number(s.value[1]))),
        `NaN from ${q.expr}`,
      ).toEqual([]);
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

  if (MISSING_METRICS.length > 0) {
    it.each(MISSING_METRICS.map((m) => [m]))('%s cannot be produced in this run (remove it from MISSING_METRICS once it can)', async (metric) => {
      expect(
        queries.some((q) => missingIn(q.expr).includes(metric)),
        `${metric} is charted by no panel`,
      ).toBe(true);
      const present = await instantQuery(prom!.url, `count({__name__=~"${seriesPattern(metric)}"})`);
      expect(present, `${metric} now has series: take it off MISSING_METRICS`).toEqual([]);
    });
  }
});
