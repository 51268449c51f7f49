import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../src/analyze.ts';
import { ConfigSchema } from '../../src/config-schema.ts';
import { DecodeError } from '../../src/errors.ts';
import type { AnalysisManifest } from '../../src/findings/manifest-schema.ts';
import { decodeOtlpJson } from '../../src/ingest/otlp/json-decode.ts';
import type { DecodedRequest } from '../../src/ingest/span.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import type { FindingSink } from '../../src/sinks/finding-sink.ts';
import { answers, completion, type ScriptedServer, startScriptedServer } from '../judge/scripted-chat-server.ts';
import { agentRunRequest } from '../reliability/agent-run.ts';

// The scripted Chat Completions server stands in for the judge's model endpoint (no LLM runs
// here); the pipeline, windows, ledger and judge client are the real ones.

const TRACE = 'c0ffee000000000000000000000000a1';

function decode(body: unknown): DecodedRequest {
  const decoded = decodeOtlpJson(JSON.stringify(body));
  if (decoded instanceof DecodeError) throw decoded;
  return decoded;
}

const servers: ScriptedServer[] = [];
const judges: DecisionPoints[] = [];
afterEach(async () => {
  await Promise.all(judges.splice(0).map((d) => d.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("a key's manifests", () => {
  it('are written in revision order when the earlier revision is judged last: its judge call hangs to a timeout, the later one is answered at once', async () => {
    // The first request (revision 1's window) never answers; every later one does.
    const server = await startScriptedServer((_body, n) => (n === 1 ? { hang: true } : { body: completion(answers()) }));
    servers.push(server);
    const cfg = ConfigSchema.parse({
      assembler: { quietPeriodMs: 1, idleTimeoutMs: 1 },
      judge: {
        enabled: true,
        client: { baseUrl: server.baseUrl, model: 'm', apiKeyEnv: null, retries: 0, backoffMs: 1, timeoutMs: 1_500 },
        sampling: { rate: 0, triggers: { l0Hit: false, outbound: false, terminal: true } },
      },
    });
    const manifests: AnalysisManifest[] = [];
    const sink: FindingSink = {
      name: 'memory',
      write: () => undefined,
      writeManifest: (m) => manifests.push(m),
      backpressure: () => undefined,
      backlog: () => ({ records: 0, bytes: 0 }),
      flushed: async () => {},
      close: async () => {},
    };
    let pipeline: Pipeline | undefined;
    const decisions = await DecisionPoints.open(await mkdtemp(join(tmpdir(), 'trajwatch-manifest-order-')), cfg.judge, {
      checks: cfg.checks,
      onFindings: (f, a) => pipeline?.emitJudged(f, a),
      onError: () => undefined,
    });
    judges.push(decisions);
    pipeline = new Pipeline({ limits: cfg.assembler, clock: 'arrival', analyze: createAnalyzer(cfg), decisions, sinks: [sink] });

    const run = agentRunRequest({ traceId: TRACE }) as { resourceSpans: { scopeSpans: { spans: { spanId: string; name: string }[] }[] }[] };
    pipeline.accept(decode(run));
    pipeline.tick(Date.now() + 60_000);
    // A late span of the same trace: revision 2, judged while revision 1's call still hangs.
    const late = structuredClone(run);
    const spans = late.resourceSpans[0]!.scopeSpans[0]!.spans;
    const extra = { ...spans[2]!, spanId: `${TRACE.slice(0, 14)}ff`, name: 'execute_tool http_get again' };
    late.resourceSpans[0]!.scopeSpans[0]!.spans = [extra];
    pipeline.accept(decode(late));
    pipeline.tick(Date.now() + 120_000);
    await pipeline.drain('end-of-input');

    expect(server.requests.length).toBeGreaterThanOrEqual(2);
    expect(manifests.map((m) => m.subject.revision)).toEqual([1, 2]);
  }, 30_000);
});
