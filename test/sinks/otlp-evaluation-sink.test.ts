import { AudienceRefusals } from '../../src/sinks/audience-refusals.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config-schema.ts';
import { parseOtlpEvaluationConfig } from '../../src/sinks/otlp/config.ts';
import { evaluationEvent } from '../../src/sinks/otlp/evaluation-event.ts';
import { OtlpEvaluationSink } from '../../src/sinks/otlp/evaluation-sink.ts';
import { expectExternalView, expectInternalView, failedJudgedFinding, judgedFinding, l0Findings, replayedFinding } from '../findings/audience-fixture.ts';
import { OtlpLogReceiver } from '../helpers/otlp-log-receiver.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});
const tempDir = async () => {
  const d = await mkdtemp(join(tmpdir(), 'trajwatch-otlp-'));
  cleanup.push(() => rm(d, { recursive: true, force: true }));
  return d;
};
const receiver = async () => {
  const r = await OtlpLogReceiver.start();
  cleanup.push(() => r.stop());
  return r;
};
async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const metric = async (registry: Registry, name: string): Promise<number> => {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? NaN : Number(line.split(' ').at(-1));
};

describe('evaluation events: audience both ways', () => {
  const records = () => [judgedFinding(), replayedFinding(), failedJudgedFinding(), ...l0Findings()];

  it('an external event body has none of the internal fields, an internal one all of them; attributes carry none in either', () => {
    for (const f of records()) {
      const external = evaluationEvent(f, 'findings', 'external');
      expectExternalView(JSON.parse(external.body));
      expectInternalView(JSON.parse(evaluationEvent(f, 'findings', 'internal').body), f);
      // The attributes are the same in both views and hold no internal field.
      expect(evaluationEvent(f, 'findings', 'internal').attributes).toEqual({ ...external.attributes, 'trajwatch.audience': 'internal' });
      expectExternalView({ ...external.attributes, subject: {}, claim: '' });
    }
  });

  it('parents the event to the anchor span and names the evaluation per the GenAI conventions', () => {
    const f = l0Findings().find((x) => x.analyst_id === 'l0')!;
    const e = evaluationEvent(f, 'alarms', 'internal');
    const [, traceId, spanId] = /^span:([0-9a-f]{32})\/([0-9a-f]{16})$/.exec(f.evidence_refs[0]!.uri)!;
    expect(e.parent).toEqual({ traceId, spanId });
    expect(e.attributes).toMatchObject({
      'gen_ai.evaluation.name': f.area,
      'gen_ai.evaluation.score.label': 'fired',
      'gen_ai.evaluation.explanation': f.claim,
      'trajwatch.stream': 'alarms',
      'trajwatch.finding_id': f.finding_id,
    });
    expect(e.attributes['gen_ai.evaluation.score.value']).toBeUndefined();
  });
});

describe('OtlpEvaluationSink: off by default, bounded, durable, failures in metrics', () => {
  it('is off unless configured, and its configuration is strict', () => {
    expect(ConfigSchema.parse({}).sinks.otlpEvaluations).toBeUndefined();
    expect(ConfigSchema.parse({ sinks: { otlpEvaluations: {} } }).sinks.otlpEvaluations?.endpoint).toBe('http://127.0.0.1:4318/v1/logs');
    expect(() => parseOtlpEvaluationConfig({ endpoint: 'not a url' })).toThrow(/endpoint/);
    expect(() => parseOtlpEvaluationConfig({ batchsize: 5 })).toThrow(/batchsize/);
    expect(() => parseOtlpEvaluationConfig({ audience: 'public' })).toThrow(/audience/);
  });

  it('while the receiver refuses: backlog and failures in metrics, events kept in the outbox across a restart, then exported once it accepts', async () => {
    const r = await receiver();
    r.failing = true;
    const dir = await tempDir();
    const config = parseOtlpEvaluationConfig({ endpoint: r.url, retryInitialMs: 20, retryMaxMs: 100, timeoutMs: 500, closeTimeoutMs: 200 });
    const registry = new Registry();
    const findings = [judgedFinding(), replayedFinding(), failedJudgedFinding(), ...l0Findings()];
    const first = await OtlpEvaluationSink.open(config, { outboxDir: dir, metrics: registry });
    first.write(findings, 'findings');
    await until('the export fails', async () => (await metric(registry, 'trajwatch_otlp_evaluations_failing')) === 1);
    expect(await metric(registry, 'trajwatch_otlp_evaluations_backlog_records')).toBe(findings.length);
    expect(await metric(registry, 'trajwatch_otlp_evaluations_export_errors_total')).toBeGreaterThan(0);
    expect(first.backlog().records).toBe(findings.length);
    await first.close(); // not exported: left in the outbox
    expect(r.records).toHaveLength(0);

    r.failing = false;
    const registry2 = new Registry();
    const second = await OtlpEvaluationSink.open(config, { outboxDir: dir, metrics: registry2 });
    await until('the earlier run’s events are exported', () => r.records.length >= findings.length);
    await until('the backlog is empty', () => second.backlog().records === 0);
    expect(r.records.map((x) => x.attributes['trajwatch.finding_id'])).toEqual(findings.map((f) => f.finding_id));
    expect(await metric(registry2, 'trajwatch_otlp_evaluations_exported_total')).toBe(findings.length);
    expect(await metric(registry2, 'trajwatch_otlp_evaluations_failing')).toBe(0);
    await second.close();
  }, 30_000);

  it('an external event that cannot be stripped is refused, counted and handed to the quarantine, never exported; the sink keeps taking input', async () => {
    const r = await receiver();
    const registry = new Registry();
    const refusals = new AudienceRefusals();
    const sink = await OtlpEvaluationSink.open(parseOtlpEvaluationConfig({ endpoint: r.url, audience: 'external' }), {
      outboxDir: await tempDir(),
      metrics: registry,
      refusals,
    });
    const bad = judgedFinding();
    (bad.observation as { values: Record<string, unknown> }).values.judge_endpoint = 'https://judge.internal';
    const good = l0Findings()[0]!;
    sink.write([bad, good], 'findings');
    await sink.flushed();
    expect(sink.backpressure()).toBeUndefined();
    expect(refusals.listed()).toEqual([
      expect.objectContaining({ sink: 'otlp-evaluations', stream: 'findings', id: bad.finding_id, reason: expect.stringMatching(/judge_endpoint/) }),
    ]);
    expect(await registry.metrics()).toMatch(/^trajwatch_otlp_evaluations_refused_total\{reason="audience"\} 1$/m);
    expect(r.records.map((x) => x.attributes['trajwatch.finding_id'])).toEqual([good.finding_id]);
    await sink.close();
  });

  it('refuses more than its outbox bound as backpressure, and loses nothing', async () => {
    const r = await receiver();
    r.failing = true;
    const config = parseOtlpEvaluationConfig({ endpoint: r.url, maxOutboxRecords: 2, retryInitialMs: 20, retryMaxMs: 50, timeoutMs: 500 });
    const sink = await OtlpEvaluationSink.open(config, { outboxDir: await tempDir() });
    const findings = [judgedFinding(), replayedFinding(), failedJudgedFinding(), ...l0Findings()];
    expect(findings.length).toBeGreaterThan(2);
    sink.write(findings, 'findings');
    expect(sink.backpressure()).toBe('otlp-outbox-full');
    expect(sink.backlog().records).toBe(findings.length);
    r.failing = false;
    await sink.flushed();
    await until('the backpressure clears', () => sink.backpressure() === undefined);
    expect(r.records.map((x) => x.attributes['trajwatch.finding_id'])).toEqual(findings.map((f) => f.finding_id));
    await sink.close();
  }, 30_000);
});
