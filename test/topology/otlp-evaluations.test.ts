import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config-schema.ts';
import { createLogger } from '../../src/telemetry/logger.ts';
import { createMetricRegistry } from '../../src/telemetry/metrics.ts';
import { buildTopology } from '../../src/topology/build.ts';
import { HttpServerComponent } from '../../src/topology/components/http-server.ts';
import { expectExternalView } from '../findings/audience-fixture.ts';
import { OtlpLogReceiver } from '../helpers/otlp-log-receiver.ts';
import { agentRunRequest, postJson } from '../reliability/agent-run.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function serve(config: Record<string, unknown>) {
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-topology-otlp-'));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
  const registry = createMetricRegistry();
  const parsed = validateConfig({
    value: { dataDir, receiver: { otlpHttp: '127.0.0.1:0', otlpGrpc: '127.0.0.1:0' }, assembler: { quietPeriodMs: 60_000, idleTimeoutMs: 60_000 }, ...config },
    source: 'test',
  });
  const { running } = await buildTopology(
    parsed,
    {
      clock: 'arrival',
      findings: { findingsPath: join(dataDir, 'findings.jsonl'), alarmsPath: join(dataDir, 'alarms.jsonl'), truncate: false },
      externalSinks: true,
      sources: { http: true, kafka: false },
    },
    { registry, logger: createLogger({ level: 'error', destination: { write: () => {} } }) },
  );
  const url = () => {
    const http = running.components.find((c) => c instanceof HttpServerComponent) as HttpServerComponent;
    return `http://127.0.0.1:${(http.server.address() as AddressInfo).port}`;
  };
  return { running, registry, url, dataDir };
}

describe('serve with OTLP evaluation events and an external local log', () => {
  it('is a component of the first layer only when configured, declares its series, and exports each finding on its trace', async () => {
    const off = await serve({});
    expect(off.running.components.map((c) => c.name)).not.toContain('otlp-evaluations');
    expect(await off.registry.metrics()).not.toMatch(/trajwatch_otlp_evaluations_/);
    await off.running.stop(5_000);

    const receiver = await OtlpLogReceiver.start();
    cleanup.push(() => receiver.stop());
    // Write-ahead log off: the open run closes at the stop (with it on, it would be left to the log).
    const t = await serve({
      receiver: { otlpHttp: '127.0.0.1:0', otlpGrpc: '127.0.0.1:0', wal: { enabled: false } },
      otlpEvaluations: { endpoint: receiver.url, audience: 'external' },
      sinks: { localLog: { audience: { findings: 'external' } } },
    });
    expect(t.running.layers[0]!.map((c) => c.name)).toEqual(['local-log', 'otlp-evaluations', 'audience-quarantine', 'revision-memory']);
    expect(await t.registry.metrics()).toMatch(/^trajwatch_otlp_evaluations_backlog_records 0$/m);
    await t.running.start();
    const traceId = '7b000000000000000000000000000001';
    expect((await postJson(t.url(), agentRunRequest({ traceId }))).status).toBe(200);
    expect(await t.running.stop(10_000)).toEqual({ outcome: 'stopped' });

    const findings = (await readFile(join(t.dataDir, 'findings.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => !('record_kind' in r));
    expect(findings.length).toBeGreaterThan(0);
    for (const f of findings) expectExternalView(f);
    // Every finding of the local log is one evaluation event, on a span of the run's trace.
    expect(receiver.records.map((r) => r.attributes['trajwatch.finding_id']).sort()).toEqual(findings.map((f) => f['finding_id']).sort());
    for (const r of receiver.records) {
      expect(r.eventName).toBe('gen_ai.evaluation.result');
      expect(r.traceId).toBe(traceId);
      expect(r.spanId).toMatch(/^7b0000000000000[0-9a-f]$/);
    }
  }, 30_000);
});
