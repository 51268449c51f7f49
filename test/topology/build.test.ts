import { mkdtemp, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config-schema.ts';
import { createLogger } from '../../src/telemetry/logger.ts';
import { createMetricRegistry } from '../../src/telemetry/metrics.ts';
import { buildTopology, type Plan } from '../../src/topology/build.ts';
import { HttpServerComponent } from '../../src/topology/components/http-server.ts';
import { agentRunRequest, postJson } from '../reliability/agent-run.ts';

async function serveLike(sources: Plan['sources'], config: Record<string, unknown> = {}, dir?: string) {
  const dataDir = dir ?? (await mkdtemp(join(tmpdir(), 'trajwatch-topology-')));
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
  const registry = createMetricRegistry();
  const parsed = validateConfig({
    value: { dataDir, receiver: { otlpHttp: '127.0.0.1:0', otlpGrpc: '127.0.0.1:0' }, assembler: { quietPeriodMs: 60_000, idleTimeoutMs: 60_000 }, ...config },
    source: 'test',
  });
  const topology = await buildTopology(
    parsed,
    {
      clock: 'arrival',
      trajectoriesPath: join(dataDir, 'trajectories.jsonl'),
      findings: { findingsPath: join(dataDir, 'findings.jsonl'), alarmsPath: join(dataDir, 'alarms.jsonl'), truncate: false },
      externalSinks: true,
      ...(sources === undefined ? {} : { sources }),
    },
    { registry, logger },
  );
  const url = () => {
    const http = topology.running.components.find((c) => c instanceof HttpServerComponent) as HttpServerComponent;
    return `http://127.0.0.1:${(http.server.address() as AddressInfo).port}`;
  };
  return { ...topology, dataDir, lines, registry, url };
}

describe('buildTopology', () => {
  it('builds serve from the configuration: sinks, judge, WAL, pipeline, then the receivers', async () => {
    const t = await serveLike({ http: true, kafka: false });
    expect(t.running.layers.map((l) => l.map((c) => c.name))).toEqual([
      ['trajectory-log', 'local-log', 'revision-memory'],
      ['judge'],
      ['span-wal'],
      ['pipeline'],
      ['receiver.http', 'receiver.grpc'],
    ]);
    expect(await t.running.stop(5_000)).toEqual({ outcome: 'stopped' });
  });

  it('runs (write-ahead log off): what arrives before the stop is closed as shutdown and durable when the stop resolves', async () => {
    const t = await serveLike({ http: true, kafka: false }, { receiver: { otlpHttp: '127.0.0.1:0', otlpGrpc: '127.0.0.1:0', wal: { enabled: false } } });
    await t.running.start();
    expect((await postJson(t.url(), agentRunRequest({ traceId: '7a000000000000000000000000000001' }))).status).toBe(200);
    const base = t.url();
    expect(await t.running.stop(5_000)).toEqual({ outcome: 'stopped' });
    const rows = (await readFile(join(t.dataDir, 'trajectories.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { incompleteReasons: string[] });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.incompleteReasons).toEqual(['shutdown']);
    // The receivers stopped first: nothing listens any more.
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    expect(t.lines.map((l) => l['msg'])).toContainEqual(expect.stringMatching(/^listening on http:\/\/127\.0\.0\.1:\d+\/v1\/traces/));
  });

  it('every component can be stopped without having started, twice, and nothing is flushed in its name', async () => {
    const t = await serveLike({ http: true, kafka: false });
    for (const c of t.running.components) {
      await c.stop();
      await c.stop();
    }
    expect(await readFile(join(t.dataDir, 'trajectories.jsonl'), 'utf8')).toBe('');
  });

  it('declares judge and Kafka series only when they run, and gauges read the components at scrape time', async () => {
    const t = await serveLike({ http: true, kafka: false });
    await t.running.start();
    try {
      let text = await t.registry.metrics();
      expect(text).not.toMatch(/^trajwatch_(judge|kafka|calibration)_/m);
      expect(text).toMatch(/^trajwatch_trajectories_open 0$/m);
      expect(text).toMatch(/^trajwatch_sink_backlog_bytes\{sink="span-wal"\} 0$/m);
      // The bounds past which they refuse, so an alert can see a backlog filling up.
      expect(text).toMatch(/^trajwatch_sink_backlog_limit_bytes\{sink="span-wal"\} 536870912$/m);
      expect(text).toMatch(/^trajwatch_sink_backlog_limit_bytes\{sink="trajectory-log"\} 67108864$/m);
      expect(text).not.toMatch(/^trajwatch_sink_backlog_limit_bytes\{sink="local-log"\}/m);
      await postJson(t.url(), agentRunRequest({ traceId: '7a000000000000000000000000000002' }));
      text = await t.registry.metrics();
      expect(text).toMatch(/^trajwatch_trajectories_open 1$/m);
      expect(text).toMatch(/^trajwatch_otlp_requests_total\{transport="http",status="200",content_type="application\/json"\} 1$/m);
    } finally {
      await t.running.stop(5_000);
    }
  });

  it('with the OTLP receivers off serves only /metrics and /healthz: /v1/traces answers 404, no gRPC, no WAL', async () => {
    const t = await serveLike({ http: false, kafka: false }, { receiver: { otlpHttp: '127.0.0.1:0', otlpGrpc: '127.0.0.1:0', auth: { tokenEnv: 'PATH' } } });
    expect(t.running.components.map((c) => c.name)).toEqual(['trajectory-log', 'local-log', 'revision-memory', 'judge', 'pipeline', 'metrics-endpoint']);
    await t.running.start();
    try {
      // Before the token check: there is no receiver to authenticate for.
      const traces = await fetch(`${t.url()}/v1/traces`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(traces.status).toBe(404);
      expect(await traces.text()).toMatch(/OTLP receivers are off/);
      expect((await fetch(`${t.url()}/healthz`)).status).toBe(200);
      expect((await fetch(`${t.url()}/metrics`, { headers: { authorization: `Bearer ${process.env['PATH']}` } })).status).toBe(200);
    } finally {
      await t.running.stop(5_000);
    }
  });

  it('a start that fails (the port is taken) stops what started and closes what was built', async () => {
    const first = await serveLike({ http: true, kafka: false });
    await first.running.start();
    try {
      const port = new URL(first.url()).port;
      const second = await serveLike({ http: true, kafka: false }, { receiver: { otlpHttp: `127.0.0.1:${port}`, otlpGrpc: '127.0.0.1:0' } });
      await expect(second.running.start()).rejects.toThrow(/EADDRINUSE/);
      expect(second.lines.some((l) => l['level'] === 'error' && /failed to start/.test(String(l['msg'])))).toBe(true);
      // Stopped means stopped: a second stop is the same, finished stop.
      expect(await second.running.stop(1_000)).toEqual({ outcome: 'stopped' });
    } finally {
      await first.running.stop(5_000);
    }
  });

  it('a start that fails after the WAL replayed aborts: nothing closes as shutdown, the WAL keeps the requests for the next start', async () => {
    const first = await serveLike({ http: true, kafka: false });
    await first.running.start();
    expect((await postJson(first.url(), agentRunRequest({ traceId: '7a000000000000000000000000000003' }))).status).toBe(200);
    // Ends like a crash: every component aborted (the pipeline does not drain), in reverse.
    for (const layer of [...first.running.layers].reverse()) for (const c of layer) await (c.abort?.() ?? c.stop());
    const blocker = await serveLike({ http: true, kafka: false });
    await blocker.running.start();
    try {
      const port = new URL(blocker.url()).port;
      const second = await serveLike({ http: true, kafka: false }, { receiver: { otlpHttp: `127.0.0.1:${port}`, otlpGrpc: '127.0.0.1:0' } }, first.dataDir);
      await expect(second.running.start()).rejects.toThrow(/EADDRINUSE/);
      expect(second.lines.map((l) => l['msg'])).toContain('replayed 1 request(s) from the write-ahead log');
      expect(await readFile(join(first.dataDir, 'trajectories.jsonl'), 'utf8')).toBe('');
      const third = await serveLike({ http: true, kafka: false }, {}, first.dataDir);
      await third.running.start();
      expect(third.lines.map((l) => l['msg'])).toContain('replayed 1 request(s) from the write-ahead log');
      await third.running.stop(5_000);
    } finally {
      await blocker.running.stop(5_000);
    }
  });
});

const brokers = process.env['TRAJWATCH_TEST_KAFKA']?.split(',');

describe.runIf(brokers !== undefined)('buildTopology with Kafka (real broker)', () => {
  it('the Kafka sink and source stop without having started, twice; the source joins only at start', async () => {
    const t = await serveLike(
      { http: false, kafka: true },
      { kafka: { brokers }, source: { kafka: { brokers, topic: `topology-${Date.now()}`, createDeadLetterTopic: false } } },
    );
    // Sessions repartitioned (the default): stage 2's pipeline, the repartition, stage 2's consumer, stage 1's pipeline, then the source.
    expect(t.running.components.map((c) => c.name)).toEqual([
      'trajectory-log',
      'local-log',
      'kafka',
      'revision-memory',
      'judge',
      'pipeline',
      'repartition',
      'source.kafka.sessions',
      'pipeline.traces',
      'metrics-endpoint',
      'source.kafka',
    ]);
    for (const c of t.running.components) {
      await c.stop();
      await c.stop();
    }
    expect(await t.running.stop(10_000)).toEqual({ outcome: 'stopped' });
  });

  it('without the repartition (sessions.enabled false) one pipeline keyed by trace, as before', async () => {
    const t = await serveLike(
      { http: false, kafka: true },
      { kafka: { brokers }, source: { kafka: { brokers, topic: `topology-${Date.now()}`, createDeadLetterTopic: false, sessions: { enabled: false } } } },
    );
    expect(t.running.components.map((c) => c.name)).toEqual([
      'trajectory-log',
      'local-log',
      'kafka',
      'revision-memory',
      'judge',
      'pipeline',
      'metrics-endpoint',
      'source.kafka',
    ]);
    expect(await t.running.stop(10_000)).toEqual({ outcome: 'stopped' });
  });
});
