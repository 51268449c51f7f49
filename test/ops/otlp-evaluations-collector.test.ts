// Evaluation events through a real OpenTelemetry Collector (built by scripts/setup/otelcol/build.sh,
// with the file exporter): the sink exports with the OTel JS logs SDK's OTLP/HTTP exporter to the
// Collector's otlp receiver, the Collector writes them with its file exporter, and the test
// reads the file back: every finding one gen_ai.evaluation.result record on its anchor span.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/findings/schema.ts';
import { parseOtlpEvaluationConfig } from '../../src/sinks/otlp/config.ts';
import { OtlpEvaluationSink } from '../../src/sinks/otlp/evaluation-sink.ts';
import {
  expectExternalView,
  expectInternalView,
  failedJudgedFinding,
  judgedFinding,
  l0Findings,
  MARKERS,
  replayedFinding,
} from '../findings/audience-fixture.ts';
import { logRecordsOf, type ReceivedLogRecord } from '../helpers/otlp-log-receiver.ts';
import { freePort } from './free-port.ts';
import { BUILD_TIMEOUT_MS, type CollectorProcess, ensureCollector, startCollector } from './otelcol.ts';

let collector: CollectorProcess | undefined;
let dir: string;
let endpoint: string;
let outFile: string;

beforeAll(async () => {
  const bin = await ensureCollector();
  dir = await mkdtemp(join(tmpdir(), 'trajwatch-otlp-evals-'));
  outFile = join(dir, 'evaluations.jsonl');
  const port = await freePort();
  endpoint = `http://127.0.0.1:${port}/v1/logs`;
  collector = await startCollector(
    bin,
    `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${port}
exporters:
  file:
    path: ${outFile}
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [file]
`,
  );
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await collector?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function readExported(count: number): Promise<ReceivedLogRecord[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const text = await readFile(outFile, 'utf8').catch(() => '');
    // The Collector may be mid-way through a line: only lines ended by a newline are whole.
    const lines = text.split('\n');
    lines.pop();
    const records = lines.filter((l) => l.trim() !== '').flatMap((l) => logRecordsOf(JSON.parse(l) as Parameters<typeof logRecordsOf>[0]));
    if (records.length >= count || Date.now() > deadline) return records;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The span a finding's evidence first names: where its event must hang. */
const anchorOf = (f: Finding) => /^(?:span|event):([0-9a-f]{32})\/([0-9a-f]{16})/.exec(f.evidence_refs[0]!.uri)!;

describe('OTLP evaluation events through a real OpenTelemetry Collector', () => {
  it('reads back every finding as gen_ai.evaluation.result, parented to its anchor span, with trajwatch provenance and the external view', async () => {
    const findings = [...l0Findings(), judgedFinding(), replayedFinding(), failedJudgedFinding()];
    const config = parseOtlpEvaluationConfig({ endpoint, audience: 'external', serviceName: 'trajwatch-test' });
    const sink = await OtlpEvaluationSink.open(config, { outboxDir: join(dir, 'outbox') });
    sink.write(findings, 'findings');
    await sink.flushed();
    expect(sink.backlog()).toEqual({ records: 0, bytes: 0 });
    await sink.close();

    // The internal direction on the same surface: a second sink, internal view, same Collector.
    const internalSink = await OtlpEvaluationSink.open(parseOtlpEvaluationConfig({ endpoint, audience: 'internal', serviceName: 'trajwatch-test' }), {
      outboxDir: join(dir, 'outbox-internal'),
    });
    internalSink.write([judgedFinding()], 'alarms');
    await internalSink.close();

    const all = await readExported(findings.length + 1);
    expect(all).toHaveLength(findings.length + 1);
    const internal = all.filter((r) => r.attributes['trajwatch.audience'] === 'internal');
    expect(internal).toHaveLength(1);
    expect(internal[0]!.attributes['trajwatch.stream']).toBe('alarms');
    expectInternalView(JSON.parse(internal[0]!.body!.stringValue!), judgedFinding());
    const exported = all.filter((r) => r.attributes['trajwatch.audience'] === 'external');
    expect(exported).toHaveLength(findings.length);
    const byId = new Map(exported.map((r) => [r.attributes['trajwatch.finding_id'], r]));
    for (const f of findings) {
      const r = byId.get(f.finding_id)!;
      expect(r, f.finding_id).toBeDefined();
      const [, traceId, spanId] = anchorOf(f);
      expect({ event: r.eventName, traceId: r.traceId, spanId: r.spanId }).toEqual({ event: 'gen_ai.evaluation.result', traceId, spanId });
      expect(r.resource['service.name']).toBe('trajwatch-test');
      expect(r.attributes).toMatchObject({
        'gen_ai.evaluation.name': f.area,
        'gen_ai.evaluation.explanation': f.claim,
        'trajwatch.analyst': f.analyst_id,
        'trajwatch.method': `${f.method.name}@${f.method.version}`,
        'trajwatch.treatment.digest': expect.stringMatching(/^([0-9a-f]{64}|unavailable)$/),
        'trajwatch.conditions.digest': expect.stringMatching(/^([0-9a-f]{64}|unavailable)$/),
        'trajwatch.audience': 'external',
      });
      // The event's time is the finding's observed_at, all nine digits.
      const [sec, frac] = f.observed_at.slice(0, -1).split('.');
      expect(r.timeUnixNano).toBe(`${Math.floor(Date.parse(`${sec}Z`) / 1000)}${frac!.padEnd(9, '0')}`);
      // Two-way audience on this surface: the external body and attributes carry no internal field
      // (error.type is the failure's class, `http`, never its message).
      expectExternalView(JSON.parse(r.body!.stringValue!));
      expect(JSON.stringify(r.attributes)).not.toContain(MARKERS.requestedModel);
      expect(JSON.stringify(r.attributes)).not.toContain(MARKERS.certificateId);
    }
    const judged = byId.get(judgedFinding().finding_id)!;
    expect(judged.attributes).toMatchObject({
      'gen_ai.evaluation.score.label': 'yes',
      'gen_ai.evaluation.score.value': 0.91,
      'trajwatch.certificate.status': 'certified',
    });
    expect(byId.get(failedJudgedFinding().finding_id)!.attributes).toMatchObject({ 'error.type': 'http', 'trajwatch.certificate.status': 'uncertified' });
    const l0 = byId.get(l0Findings()[0]!.finding_id)!;
    expect(l0.attributes).toMatchObject({ 'trajwatch.certificate.status': 'not-applicable' });
    expect(l0.attributes['error.type']).toBeUndefined();
  }, 60_000);
});
