import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../src/analyze.ts';
import { ConfigSchema } from '../../src/config-schema.ts';
import { DecodeError } from '../../src/errors.ts';
import { recordJsonSchema } from '../../src/findings/json-schema.ts';
import type { AnalysisManifest } from '../../src/findings/manifest-schema.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { deriveProvenance } from '../../src/findings/provenance/derive.ts';
import { decodeOtlpJson } from '../../src/ingest/otlp/json-decode.ts';
import type { DecodedRequest } from '../../src/ingest/span.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import type { FindingSink } from '../../src/sinks/finding-sink.ts';
import { agentRunRequest } from '../reliability/agent-run.ts';
import { answers, completion, type ScriptedReply, type ScriptedServer, startScriptedServer } from '../judge/scripted-chat-server.ts';

// The scripted Chat Completions server stands in for the judge's model endpoint (no LLM runs
// here); the pipeline, windows, ledger and judge client are the real ones.

type Row = Finding | AnalysisManifest;

/** A sink that keeps what it was given, in order; durable at once. */
function memorySink(): FindingSink & { rows: Row[] } {
  const rows: Row[] = [];
  return {
    name: 'memory',
    rows,
    write: (records, stream) => {
      if (stream === 'findings') rows.push(...records);
    },
    writeManifest: (manifest) => rows.push(manifest),
    backpressure: () => undefined,
    backlog: () => ({ records: 0, bytes: 0 }),
    flushed: async () => {},
    close: async () => {},
  };
}

const isManifest = (r: Row): r is AnalysisManifest => 'record_kind' in r;
const manifests = (rows: Row[]) => rows.filter(isManifest);
const findings = (rows: Row[]) => rows.filter((r): r is Finding => !isManifest(r));

function decode(body: unknown): DecodedRequest {
  const decoded = decodeOtlpJson(JSON.stringify(body));
  if (decoded instanceof DecodeError) throw decoded;
  return decoded;
}

const config = (judge: Record<string, unknown> = {}) => ConfigSchema.parse({ assembler: { quietPeriodMs: 1, idleTimeoutMs: 1 }, judge });

const servers: ScriptedServer[] = [];
const judges: DecisionPoints[] = [];
afterEach(async () => {
  await Promise.all(judges.splice(0).map((d) => d.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function withJudge(script: (body: Record<string, unknown>) => ScriptedReply, judge: Record<string, unknown> = {}) {
  const server = await startScriptedServer(script);
  servers.push(server);
  const cfg = config({
    enabled: true,
    client: { baseUrl: server.baseUrl, model: 'm', apiKeyEnv: null, retries: 0, backoffMs: 1, timeoutMs: 800 },
    sampling: { rate: 0 },
    ...judge,
  });
  const sink = memorySink();
  let pipeline: Pipeline | undefined;
  const decisions = await DecisionPoints.open(await mkdtemp(join(tmpdir(), 'trajwatch-manifest-')), cfg.judge, {
    checks: cfg.checks,
    onFindings: (f, a) => pipeline?.emitJudged(f, a),
    onError: () => undefined,
  });
  judges.push(decisions);
  pipeline = new Pipeline({
    limits: cfg.assembler,
    clock: 'arrival',
    analyze: createAnalyzer(cfg),
    provenance: (t) => deriveProvenance(t, cfg.provenance),
    decisions,
    sinks: [sink],
  });
  return { pipeline, sink, server };
}

const TRACE = 'c0ffee00000000000000000000000001';

describe('the analysis manifest of a closed trajectory revision', () => {
  it('is written with the inline findings at once when no window is sampled, naming each check and validating against `trajwatch schema record`', () => {
    const cfg = config();
    const sink = memorySink();
    const pipeline = new Pipeline({ limits: cfg.assembler, clock: 'arrival', analyze: createAnalyzer(cfg), sinks: [sink] });
    pipeline.accept(decode(agentRunRequest({ traceId: TRACE })), { partition: 0, offset: 0 });
    pipeline.tick(Date.now() + 60_000);

    const [manifest, ...more] = manifests(sink.rows);
    expect(more).toEqual([]);
    expect(sink.rows.at(-1)).toBe(manifest);
    expect(manifest!.subject).toEqual({ trajectory_key: TRACE, trace_ids: [TRACE], revision: 1 });
    expect(manifest!.capture.complete).toBe(true);
    expect(manifest!.judge).toBe('disabled');
    expect(manifest!.windows).toEqual([]);
    const byCheck = Object.fromEntries(manifest!.checks.map((c) => [c.check, c]));
    expect(Object.keys(byCheck)).toEqual([
      'error-output',
      'fault-passthrough',
      'malformed-structure',
      'unguarded-send',
      'out-of-order-gate',
      'tool-repetition',
    ]);
    const errorOutput = findings(sink.rows).filter((f) => f.area === 'error-output');
    expect(errorOutput).toHaveLength(1);
    expect(byCheck['error-output']).toMatchObject({ status: 'fired', finding_ids: [errorOutput[0]!.finding_id] });
    // Each check that made no finding says so, from a complete capture: observed none; but the
    // run's agent span carries no answer, so whether its failure reached the answer is not claimed.
    expect(byCheck['fault-passthrough']).toMatchObject({ status: 'unavailable', reason: 'run-outcome-not-captured' });
    for (const c of manifest!.checks) if (c.finding_ids.length === 0 && c.check !== 'fault-passthrough') expect(c.status, c.check).toBe('none-observed');
    expect(manifest!.provenance).toMatchObject({ status: 'derived', issues: [] });

    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(recordJsonSchema());
    for (const row of sink.rows) expect(validate(JSON.parse(JSON.stringify(row))), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...manifest, finding_id: errorOutput[0]!.finding_id })).toBe(false);
  });

  it('from an incomplete capture claims no absence: the checks that did not fire are unavailable (incomplete-capture)', async () => {
    const cfg = config();
    const sink = memorySink();
    const pipeline = new Pipeline({ limits: cfg.assembler, clock: 'arrival', analyze: createAnalyzer(cfg), sinks: [sink] });
    // The root never arrives: the children name a parent that was never exported.
    const body = agentRunRequest({ traceId: TRACE }) as { resourceSpans: { scopeSpans: { spans: { parentSpanId?: string }[] }[] }[] };
    const spans = body.resourceSpans[0]!.scopeSpans[0]!.spans;
    spans.shift();
    pipeline.accept(decode(body));
    await pipeline.drain('shutdown');

    const [manifest] = manifests(sink.rows);
    expect(manifest!.capture.complete).toBe(false);
    expect(manifest!.capture.incomplete_reasons.length).toBeGreaterThan(0);
    const byCheck = Object.fromEntries(manifest!.checks.map((c) => [c.check, c]));
    expect(byCheck['error-output']!.status).toBe('fired');
    for (const check of ['fault-passthrough', 'malformed-structure', 'unguarded-send', 'out-of-order-gate', 'tool-repetition']) {
      expect(byCheck[check], check).toMatchObject({ status: 'unavailable', reason: 'incomplete-capture', finding_ids: [] });
    }
    expect(byCheck['unguarded-send']!.detail).toMatch(/not run/);
  });

  it('names every window the policy could ask for: judged with its finding ids, refused, and not sampled by the rate', async () => {
    const { pipeline, sink } = await withJudge(() => ({ body: completion(answers()) }), {
      sampling: { rate: 0 },
      windowPolicy: { config: { maxWindowsPerTrajectory: 1 } },
    });
    pipeline.accept(decode(agentRunRequest({ traceId: TRACE })));
    await pipeline.drain('end-of-input');

    const [manifest, ...more] = manifests(sink.rows);
    expect(more).toEqual([]);
    // Written after the judged findings it names.
    expect(sink.rows.at(-1)).toBe(manifest);
    expect(manifest!.judge).toBe('enabled');
    const fates = manifest!.windows.map((w) => `${w.fate}:${w.reason ?? ''}:${w.triggers.join('+')}`).sort();
    expect(fates).toEqual(['judged::l0-hit+outbound', 'not-sampled:rate:sampled', 'refused:windows-per-trajectory:terminal']);
    const judged = manifest!.windows.find((w) => w.fate === 'judged')!;
    // Eight question findings and the window's repetition observation, all on the stream before it.
    const emitted = new Set(findings(sink.rows).map((f) => f.finding_id));
    expect(judged.finding_ids).toHaveLength(9);
    for (const id of judged.finding_ids) expect(emitted.has(id)).toBe(true);
    for (const f of findings(sink.rows).filter((f) => f.method.kind === 'judged')) expect(judged.finding_ids).toContain(f.finding_id);
    expect(new Set(manifest!.windows.map((w) => w.window_id)).size).toBe(manifest!.windows.length);
  });
});

describe('the manifest’s provenance', () => {
  it('is derived for a trajectory whose only findings are judged, and not derived for a clean one', async () => {
    const { pipeline, sink } = await withJudge(() => ({ body: completion(answers()) }));
    const clean = agentRunRequest({ traceId: TRACE }) as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] };
    clean.resourceSpans[0]!.scopeSpans[0]!.spans.pop(); // no failing deploy: no inline finding
    pipeline.accept(decode(clean));
    await pipeline.drain('end-of-input');
    const [judged] = manifests(sink.rows);
    expect(findings(sink.rows).filter((f) => f.analyst_id === 'l0' || f.analyst_id === 'tool-repetition')).toEqual([]);
    expect(judged!.windows.some((w) => w.fate === 'judged' && w.finding_ids.length > 0)).toBe(true);
    expect(judged!.provenance).toMatchObject({ status: 'derived', issues: [] });

    const cfg = config();
    const plain = memorySink();
    const quiet = new Pipeline({
      limits: cfg.assembler,
      clock: 'arrival',
      analyze: createAnalyzer(cfg),
      provenance: (t) => deriveProvenance(t, cfg.provenance),
      sinks: [plain],
    });
    quiet.accept(decode(clean));
    await quiet.drain('end-of-input');
    expect(plain.rows).toHaveLength(1);
    expect(manifests(plain.rows)[0]!.provenance).toEqual({ status: 'not-derived', reason: 'no-finding' });
  });
});

describe('source positions and the judged part (durability floor)', () => {
  it('holds a trajectory’s positions until its judged findings and manifest are written, then releases them', async () => {
    const { pipeline, sink } = await withJudge(() => ({ hang: true }), { sampling: { rate: 0, triggers: { outbound: false, terminal: false } } });
    pipeline.accept(decode(agentRunRequest({ traceId: TRACE })), { partition: 0, offset: 0 });
    pipeline.tick(Date.now() + 60_000);
    expect(pipeline.counts.trajectoriesClosed).toBe(1);
    // The inline findings are durable and the judge call is out: the record is not finished.
    await new Promise((r) => setTimeout(r, 200));
    expect(findings(sink.rows).some((f) => f.area === 'error-output')).toBe(true);
    expect(manifests(sink.rows)).toEqual([]);
    expect(pipeline.committable().get(0)).toBe(0);

    // The call times out: its escalation is written, then the manifest, then the record is finished.
    await pipeline.settled();
    const judged = findings(sink.rows).filter((f) => f.method.kind === 'judged');
    expect(judged.length).toBeGreaterThan(0);
    const [manifest] = manifests(sink.rows);
    expect(sink.rows.at(-1)).toBe(manifest);
    expect(manifest!.windows.filter((w) => w.fate === 'judged')).toMatchObject([{ triggers: ['l0-hit'], reason: 'timeout' }]);
    expect(pipeline.committable().get(0)).toBe(1);
  });

  it('does not wait when no window is sampled for a trajectory, and says which trigger was off', async () => {
    const { pipeline, sink } = await withJudge(() => ({ hang: true }), { sampling: { rate: 0, triggers: { l0Hit: false, outbound: false, terminal: false } } });
    pipeline.accept(decode(agentRunRequest({ traceId: TRACE })), { partition: 0, offset: 0 });
    pipeline.tick(Date.now() + 60_000);
    const [manifest] = manifests(sink.rows);
    const fates = manifest!.windows.map((w) => `${w.fate}:${w.reason}:${w.triggers.join('+')}`).sort();
    expect(fates).toEqual(['not-sampled:rate:sampled', 'not-sampled:trigger-off:l0-hit+outbound', 'not-sampled:trigger-off:terminal']);
    await pipeline.settled();
    expect(pipeline.committable().get(0)).toBe(1);
  });
});
