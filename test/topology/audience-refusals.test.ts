import { mkdtemp, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config-schema.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { createLogger } from '../../src/telemetry/logger.ts';
import { createMetricRegistry } from '../../src/telemetry/metrics.ts';
import { refusalLines } from '../../src/sinks/audience-refusals.ts';
import { buildTopology } from '../../src/topology/build.ts';
import { HttpServerComponent } from '../../src/topology/components/http-server.ts';
import { expectExternalView, judgedFinding } from '../findings/audience-fixture.ts';
import { startScriptedServer, type ScriptedServer } from '../judge/scripted-chat-server.ts';
import { walkScript } from '../judge/walk/walk-harness.ts';
import { agentRunRequest, postJson } from '../reliability/agent-run.ts';
import { consumeMessages, kafkaForTests, uniqueTopic } from '../helpers/kafka.ts';
import { OtlpLogReceiver } from '../helpers/otlp-log-receiver.ts';

// Serve's topology in process, with its real OTLP/HTTP receiver, local logs and judge. The
// scripted Chat Completions server stands in for the judge's LLM endpoint (no LLM runs here).

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serveWithWalk(audience: 'external' | 'internal' = 'external', extra: Record<string, unknown> = {}) {
  const model = await startScriptedServer(walkScript());
  servers.push(model);
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-audience-serve-'));
  const registry = createMetricRegistry();
  const config = validateConfig({
    value: {
      dataDir,
      receiver: { otlpHttp: '127.0.0.1:0', otlpGrpc: '127.0.0.1:0' },
      assembler: { quietPeriodMs: 50, idleTimeoutMs: 60_000 },
      sinks: { localLog: { audience: { findings: audience } } },
      judge: {
        enabled: true,
        client: { baseUrl: model.baseUrl, model: 'judge', apiKeyEnv: null, backoffMs: 1, timeoutMs: 5_000 },
        sampling: { rate: 0, triggers: { l0Hit: false, outbound: false, terminal: true } },
        walk: { enabled: true },
      },
      ...extra,
    },
    source: 'test',
  });
  const topology = await buildTopology(
    config,
    {
      clock: 'arrival',
      trajectoriesPath: join(dataDir, 'trajectories.jsonl'),
      findings: { findingsPath: join(dataDir, 'findings.jsonl'), truncate: false },
      externalSinks: true,
      sources: { http: true, kafka: false },
    },
    { registry, logger: createLogger({ level: 'fatal', destination: { write: () => undefined } }) },
  );
  await topology.running.start();
  const http = topology.running.components.find((c) => c instanceof HttpServerComponent) as HttpServerComponent;
  const url = `http://127.0.0.1:${(http.server.address() as AddressInfo).port}`;
  const lines = async () =>
    // Whole lines only: the last one may be mid-write.
    (await readFile(join(dataDir, 'findings.jsonl'), 'utf8').catch(() => ''))
      .split('\n')
      .slice(0, -1)
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ...topology, model, dataDir, registry, url, lines };
}

async function until(what: string, ok: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('serve with the walk on and the findings log on audience: external', () => {
  it('the walk findings reach the external log stripped, and ingestion keeps answering 200', async () => {
    const s = await serveWithWalk();
    expect((await postJson(s.url, agentRunRequest({ traceId: '7b000000000000000000000000000001' }))).status).toBe(200);
    // The manifest is written once the walk's findings went to the sinks.
    await until('the first manifest', async () => (await s.lines()).some((l) => l.record_kind === 'analysis-manifest'));
    for (let i = 2; i <= 4; i++) {
      const res = await postJson(s.url, agentRunRequest({ traceId: `7b00000000000000000000000000000${i}` }));
      expect(res.status, `export ${i}`).toBe(200);
    }
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    const lines = await s.lines();
    const walk = lines.filter((l) => l.analyst_id === 'layered-walk');
    expect(walk.some((l) => l.area === 'walk.summary')).toBe(true);
    for (const l of lines) expectExternalView(l);
    expect(s.audienceRefusals.count).toBe(0);
    expect(await s.running.stop(5_000)).toEqual({ outcome: 'stopped' });
  }, 60_000);

  it('judge + walk with every sink external (local log, Kafka, OTLP evaluation events): each gets the walk findings stripped, none is refused, ingestion keeps answering 200', async () => {
    const brokers = await kafkaForTests();
    if (brokers === undefined) return;
    const receiver = await OtlpLogReceiver.start();
    const topic = uniqueTopic('combined.findings');
    const s = await serveWithWalk('external', {
      kafka: {
        brokers,
        createTopics: true,
        topicPartitions: 1,
        topics: { findings: topic, alarms: uniqueTopic('combined.alarms') },
        audience: { findings: 'external', alarms: 'external' },
      },
      otlpEvaluations: { endpoint: receiver.url, audience: 'external' },
    });
    try {
      for (let i = 1; i <= 4; i++) {
        expect((await postJson(s.url, agentRunRequest({ traceId: `7d00000000000000000000000000000${i}` }))).status, `export ${i}`).toBe(200);
      }
      await until('four manifests', async () => (await s.lines()).filter((l) => l.record_kind === 'analysis-manifest').length >= 4, 30_000);
      const local = (await s.lines()).filter((l) => l.record_kind === undefined);
      const walkIds = new Set(local.filter((l) => l.analyst_id === 'layered-walk').map((l) => l.finding_id as string));
      expect(walkIds.size).toBeGreaterThan(0);
      for (const l of await s.lines()) expectExternalView(l);
      const onTopic = await consumeMessages(
        brokers,
        [topic],
        (m) => m.filter((x) => walkIds.has((JSON.parse(x.value) as { finding_id?: string }).finding_id ?? '')).length >= walkIds.size,
      );
      const topicRecords = onTopic.map((m) => JSON.parse(m.value) as Record<string, unknown>);
      for (const r of topicRecords) expectExternalView(r);
      expect(new Set(topicRecords.map((r) => r.finding_id).filter((id) => walkIds.has(id as string))).size).toBe(walkIds.size);
      await until('evaluation events', async () => receiver.records.length >= local.length, 30_000);
      expect(s.audienceRefusals.count).toBe(0);
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    } finally {
      expect(await s.running.stop(10_000)).toEqual({ outcome: 'stopped' });
      await receiver.stop();
    }
  }, 120_000);

  it('a record that cannot be stripped is kept whole in the quarantine log, counted by sink and kind, and ingestion keeps answering 200', async () => {
    const s = await serveWithWalk();
    // No emitter in the code makes such a record: one is handed to the pipeline the way the judge hands its findings.
    const bad = judgedFinding();
    (bad.observation as { values: Record<string, unknown> }).values.judge_endpoint = 'https://judge.internal';
    s.pipeline.emitJudged([bad as Finding], []);
    expect(s.pipeline.admission()).toBeUndefined();
    expect((await postJson(s.url, agentRunRequest({ traceId: '7c000000000000000000000000000001' }))).status).toBe(200);
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    expect(await s.registry.metrics()).toMatch(/^trajwatch_audience_refused_total\{sink="local-log",kind="trace-questions\/trace-question"\} 1$/m);
    expect(await s.running.stop(5_000)).toEqual({ outcome: 'stopped' });
    expect(await readFile(join(s.dataDir, 'findings.jsonl'), 'utf8')).not.toContain('judge.internal');
    const kept = (await readFile(join(s.dataDir, 'audience-refused.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { refusal: string; id: string; record: Finding });
    expect(kept).toEqual([expect.objectContaining({ refusal: 'audience-strip-failed', sink: 'local-log', id: bad.finding_id, record: bad })]);
  }, 60_000);
});

describe("replay's topology (event clock, the findings file external)", () => {
  it('reports a refused record by id, kind and reason, the lines replay prints before exiting 1, and keeps it whole', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-audience-replay-'));
    const config = validateConfig({ value: { dataDir, sinks: { localLog: { audience: { findings: 'external' } } } }, source: 'test' });
    const findingsPath = join(dataDir, 'out.jsonl');
    const topology = await buildTopology(
      config,
      { clock: 'event', findings: { findingsPath, truncate: true }, externalSinks: false },
      { registry: undefined, logger: createLogger({ level: 'fatal', destination: { write: () => undefined } }) },
    );
    await topology.running.start();
    // No emitter in the code makes such a record: one is handed to the pipeline the way the judge hands its findings.
    const bad = judgedFinding();
    (bad.observation as { values: Record<string, unknown> }).values.judge_endpoint = 'https://judge.internal';
    topology.pipeline.emitJudged([bad as Finding], []);
    await topology.pipeline.drain('end-of-input');
    expect(await topology.running.stop()).toEqual({ outcome: 'stopped' });
    const lines = refusalLines(topology.audienceRefusals);
    expect(lines[0]).toBe(
      `1 record(s) refused by an external view (audience-strip-failed), not written to that sink; each kept whole in ${join(dataDir, 'audience-refused.jsonl')}`,
    );
    expect(lines[1]).toMatch(new RegExp(`^refused: local-log findings: finding ${bad.finding_id} \\(trace-questions/trace-question\\): .*judge_endpoint`));
    expect(await readFile(findingsPath, 'utf8')).not.toContain('judge.internal');
    expect(JSON.parse((await readFile(join(dataDir, 'audience-refused.jsonl'), 'utf8')).trim()).record).toEqual(bad);
  }, 30_000);
});
