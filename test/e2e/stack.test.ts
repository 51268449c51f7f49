// The shipped stack end to end, as `npm run stack` runs it here: the real Collector (built by
// scripts/setup/otelcol/build.sh), the shared Kafka broker (attached, topics suffixed for this
// run), two real `trajwatch serve --source kafka` members, Prometheus with the alert rules and
// Alertmanager, all loopback processes started by `up`. The JS demo sends its agent runs through
// the Collector; the findings must arrive on the findings topic and as evaluation events in the
// Collector's file exporter; content sent only as log events must reach the trajectories
// through otlp_logs. Then one member is killed with SIGKILL mid-demo: every run's
// findings still arrive (duplicates allowed, counted). `down` must leave no pid alive.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { context, trace } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoReport, demo } from '../../scripts/stack/demo.ts';
import { NAMES } from '../../scripts/stack/description.ts';
import { mappingOf, ownsPid, readState, type StackState } from '../../scripts/stack/state.ts';
import { consumeMessages, kafkaForTests } from '../helpers/kafka.ts';
import { BUILD_TIMEOUT_MS, ensureCollector } from '../ops/otelcol.ts';
import { instantQuery, waitForQuery } from '../ops/prometheus.ts';

const run = promisify(execFile);
const MAIN = new URL('../../scripts/stack/main.ts', import.meta.url).pathname;
const stack = (...args: string[]) => run(process.execPath, [MAIN, ...args], { timeout: 600_000 });

let stateDir: string;
let state: StackState;
let pids: number[] = [];

beforeAll(async () => {
  await ensureCollector();
  const brokers = await kafkaForTests();
  if (brokers === undefined) throw new Error('no Kafka broker for this test (see test/helpers/kafka.ts for why)');
  stateDir = join(await mkdtemp(join(tmpdir(), 'trajwatch-stack-')), 'state');
  await stack('up', '--state-dir', stateDir, '--kafka', brokers.join(','), '--suffix', randomUUID().slice(0, 8));
  state = (await readState(stateDir))!;
  pids = state.services.flatMap((s) => (s.pid === undefined ? [] : [s.pid]));
}, BUILD_TIMEOUT_MS + 300_000);

afterAll(async () => {
  // Also when a test failed midway; `down` is idempotent.
  if (stateDir !== undefined) await stack('down', '--state-dir', stateDir);
}, 120_000);

/** The member's Kafka records read so far (its /metrics); -1 once it no longer answers. */
async function recordsRead(url: string): Promise<number> {
  const text = await fetch(url).then(
    (r) => r.text(),
    () => '',
  );
  const line = text.split('\n').find((l) => l.startsWith('trajwatch_kafka_source_records_total'));
  return line === undefined ? -1 : Number(line.split(' ').at(-1));
}

/** A run's findings by area, sorted: the same for every run of the scripted demo. */
const areasOf = (r: DemoReport, key: string) =>
  r.findings
    .filter((f) => f.trajectoryKey === key)
    .map((f) => f.area)
    .sort();

describe('npm run stack: up → demo → checks → chaos → down', () => {
  let calm: DemoReport;

  it('up started every local service of the description, each alive, and refuses a second up', async () => {
    expect(state.services.map((s) => s.name).sort()).toEqual(['alertmanager', 'kafka', 'otel-collector', 'prometheus', 'trajwatch-1', 'trajwatch-2']);
    expect(pids).toHaveLength(5);
    for (const pid of pids) expect(await ownsPid(pid, stateDir), `pid ${pid}`).toBe(true);
    await expect(stack('up', '--state-dir', stateDir, '--kafka', state.kafka.brokers.join(','))).rejects.toThrow(
      /already up in .*run `npm run stack -- down` first/,
    );
  });

  it('demo: every finding of the run is on the findings topic and came back through the Collector as an evaluation event', async () => {
    const { stdout } = await stack('demo', '--state-dir', stateDir, '--json', '--wait-ms', '120000');
    calm = JSON.parse(stdout) as DemoReport;
    const key = calm.conversations[0]!;
    expect(calm.missing).toEqual([]);
    // The demo sends its content as log events (--content logs): the repetition is found only if the
    // arguments came through the Collector's logs pipeline and otlp_logs to the member.
    expect(areasOf(calm, key)).toEqual(['error-output', 'tool.repetition', 'unguarded-send', 'unguarded-send']);
    for (const f of calm.findings) {
      expect(f.records.length, f.findingId).toBeGreaterThanOrEqual(1);
      expect(f.evaluationEvents, f.findingId).toBeGreaterThanOrEqual(1);
    }
    expect(calm.topic).toBe(mappingOf(state).name(NAMES.findings));
  }, 240_000);

  it('Prometheus scrapes both members (job trajwatch) and the Collector, with the alert rules loaded', async () => {
    const url = `http://${mappingOf(state).addr('prometheus', 'web')}`;
    await waitForQuery(url, 'count(up{job="trajwatch"} == 1)', (v) => v === 2, 60_000);
    await waitForQuery(url, 'up{job="otel-collector"}', (v) => v === 1, 60_000);
    expect((await instantQuery(url, 'up{job="trajwatch"}')).map((s) => s.metric.instance).sort()).toEqual(
      ['trajwatch-1', 'trajwatch-2'].map((s) => mappingOf(state).addr(s, 'http')).sort(),
    );
    const rules = (await (await fetch(`${url}/api/v1/rules`)).json()) as { data: { groups: { rules: unknown[] }[] } };
    expect(rules.data.groups.flatMap((g) => g.rules).length).toBeGreaterThan(0);
  }, 90_000);

  it('the Collector writes OTLP log records to the logs topic keyed by their trace id', async () => {
    const m = mappingOf(state);
    const traceId = randomUUID().replaceAll('-', '');
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': 'stack-e2e' }),
      processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `http://${m.addr('otel-collector', 'otlpHttp')}/v1/logs` }) })],
    });
    const ctx = trace.setSpanContext(context.active(), { traceId, spanId: '00f067aa0ba902b7', traceFlags: 1 });
    provider
      .getLogger('stack-e2e')
      .emit({ eventName: 'gen_ai.tool.message', context: ctx, body: { role: 'tool', content: '{"order_id":"A-77"}', id: 'call_1' } });
    await provider.forceFlush();
    await provider.shutdown();
    const records = await consumeMessages(state.kafka.brokers, [m.name(NAMES.logs)], (rs) => rs.some((r) => r.key === traceId), 60_000);
    expect(records.find((r) => r.key === traceId)).toBeDefined();
  }, 90_000);

  it('the trajectories carry the tool arguments and results sent only as log events (the members read otlp_logs too)', async () => {
    const m = mappingOf(state);
    const collector = `http://${m.addr('otel-collector', 'otlpHttp')}`;
    const session = `stack-logs-${randomUUID()}`;
    const resource = resourceFromAttributes({ 'service.name': 'stack-e2e-agent' });
    const tracerProvider = new BasicTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${collector}/v1/traces` }))],
    });
    const loggerProvider = new LoggerProvider({
      resource,
      processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${collector}/v1/logs` }) })],
    });
    const tracer = tracerProvider.getTracer('stack-e2e');
    const logger = loggerProvider.getLogger('stack-e2e');
    const root = tracer.startSpan('invoke_agent forecaster', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': session } });
    const rootCtx = trace.setSpan(context.active(), root);
    // The span names the call only; its arguments and result are log events in its context.
    const tool = tracer.startSpan(
      'execute_tool get_weather',
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'get_weather',
          'gen_ai.tool.call.id': 'call_1',
          'gen_ai.conversation.id': session,
        },
      },
      rootCtx,
    );
    const toolCtx = trace.setSpan(rootCtx, tool);
    logger.emit({ eventName: 'gen_ai.tool.message', context: toolCtx, body: { role: 'tool', content: '{"city": "Paris"}', id: 'call_1' } });
    logger.emit({ eventName: 'gen_ai.choice', context: toolCtx, body: { message: '18C, sunny', id: 'call_1' } });
    tool.end();
    root.end();
    await loggerProvider.forceFlush();
    await tracerProvider.forceFlush();
    await Promise.all([loggerProvider.shutdown(), tracerProvider.shutdown()]);

    type Row = { key: string; steps: { kind: string; args?: { parsed?: unknown }; result?: string }[] };
    const deadline = Date.now() + 60_000;
    let row: Row | undefined;
    while (row === undefined && Date.now() < deadline) {
      for (const member of ['trajwatch-1', 'trajwatch-2']) {
        const text = await readFile(join(m.dir(member, '/data'), 'trajectories.jsonl'), 'utf8').catch(() => '');
        const rows = text.split('\n').flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Row] : []));
        row = rows.filter((r) => r.key === session).at(-1) ?? row;
      }
      if (row === undefined) await new Promise((r) => setTimeout(r, 500));
    }
    const toolStep = row?.steps.find((s) => s.kind === 'tool');
    expect(toolStep?.args?.parsed).toEqual({ city: 'Paris' });
    expect(toolStep?.result).toBe('18C, sunny');
  }, 90_000);

  it('chaos: one member killed with SIGKILL mid-demo, the other takes over; every run has all its findings, duplicates counted', async () => {
    const victim = state.services.find((s) => s.name === 'trajwatch-2')!;
    const victimMetrics = `http://${mappingOf(state).addr('trajwatch-2', 'http')}/metrics`;
    const before = await recordsRead(victimMetrics);
    expect(before, 'trajwatch_kafka_source_records_total on the victim').toBeGreaterThanOrEqual(0);
    let killed: Promise<void> | undefined;
    const report = await demo(state, {
      runs: 8,
      expectPerRun: 4,
      waitMs: 180_000,
      // Mid-demo: once the victim has read some of this demo's records from Kafka.
      onSending: () => {
        killed = (async () => {
          const deadline = Date.now() + 60_000;
          while ((await recordsRead(victimMetrics)) <= before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          process.kill(victim.pid!, 'SIGKILL');
        })();
      },
    });
    await killed;
    expect(await ownsPid(victim.pid!, stateDir)).toBe(false);
    const expected = areasOf(calm, calm.conversations[0]!);
    for (const key of report.conversations) expect(areasOf(report, key), key).toEqual(expected);
    expect(report.missing).toEqual([]);
    const deliveries = report.findings.reduce((n, f) => n + f.records.length, 0);
    console.log(
      `stack chaos: ${report.findings.length} findings of ${report.conversations.length} runs, ${deliveries} deliveries, ${report.duplicates} duplicates`,
    );
    expect(deliveries).toBe(report.findings.length + report.duplicates);
    // The survivor ended up with every partition of the spans topic.
    const log = await readFile(state.services.find((s) => s.name === 'trajwatch-1')!.log!, 'utf8');
    const spans = mappingOf(state).name(NAMES.spans);
    const assigned = log
      .split('\n')
      .filter((l) => l.includes('"partitions assigned"'))
      .map((l) => JSON.parse(l) as { topic?: string; partitions: number[] })
      .filter((r) => r.topic === spans);
    expect(assigned.at(-1)?.partitions.sort()).toEqual([0, 1, 2, 3, 4, 5]);
  }, 300_000);

  it('down stops what up started: no pid left alive, the state directory gone', async () => {
    await stack('down', '--state-dir', stateDir);
    for (const pid of pids) expect(await ownsPid(pid, stateDir), `pid ${pid}`).toBe(false);
    expect(await readState(stateDir).catch(() => undefined)).toBeUndefined();
    const { stdout } = await stack('down', '--state-dir', stateDir);
    expect(stdout).toContain('nothing up');
  }, 120_000);
});
