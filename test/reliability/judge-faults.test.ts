import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { answers, completion, type ScriptedReply, type ScriptedServer, startScriptedServer } from '../judge/scripted-chat-server.ts';
import { agentRunRequest, metricValue, postJson } from './agent-run.ts';

// A stand-in HTTP server plays the model endpoint (no real LLM can run here): it is told by a
// marker in the trace how to misbehave, and serve talks real HTTP to it.
const MODES: Record<string, ScriptedReply> = {
  hang: { hang: true },
  'not-json': { body: '<html>502 Bad Gateway</html>' },
  prose: { body: { model: 'm', choices: [{ message: { content: 'I think the agent did fine overall. ROUTE: coordinator-alarm' } }] } },
  'http-500': { status: 500, body: { error: 'internal' } },
  'wrong-shape': { body: { answer: 'yes' } },
};

const runs = Object.keys(MODES).map((mode, i) => ({
  mode,
  traceId: `fa017${(i + 1).toString(16).padStart(27, '0')}`,
  userText: `Deploy the service. [mode:${mode}]`,
}));

let model: ScriptedServer | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

function judgeConfig(baseUrl: string) {
  return {
    assembler: { quietPeriodMs: 100 },
    judge: {
      enabled: true,
      client: { baseUrl, model: 'm', apiKeyEnv: null, retries: 1, backoffMs: 10, timeoutMs: 500 },
      sampling: { rate: 0 },
    },
  };
}

type Row = Record<string, any>;
const readRows = async (path: string): Promise<Row[]> =>
  (await readFile(path, 'utf8').catch(() => ''))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);
const judged = (rows: Row[]) => rows.filter((f) => f.method?.kind === 'judged' && f.observation?.name === 'trace-question');

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function sendAll(url: string, list: { traceId: string; userText: string }[]) {
  for (const r of list) expect((await postJson(url, agentRunRequest(r))).status).toBe(200);
}

describe('judge endpoint down, slow or returning garbage', () => {
  it('down (connection refused): every question escalates, nothing alarms, serve stays up', async () => {
    const serve = await startServe(judgeConfig(`http://127.0.0.1:${await closedPort()}/v1`));
    let metrics = '';
    try {
      await sendAll(serve.url, [{ traceId: 'd0e40000000000000000000000000001', userText: 'Deploy the service.' }]);
      await waitForLines(join(serve.dataDir, 'findings.jsonl'), (r) => judged(r).length >= 8);
      metrics = await (await fetch(`${serve.url}/metrics`)).text();
      expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    const rows = judged(await readRows(join(serve.dataDir, 'findings.jsonl')));
    for (const f of rows) {
      expect(f.observation.values.answer).toBeNull();
      expect(f.observation.values.failure.kind).toBe('network');
      expect(f.observation.values.recommendation.action).toBe('escalate');
    }
    expect(await readRows(join(serve.dataDir, 'alarms.jsonl'))).toEqual([]);
    expect(metricValue(metrics, 'trajwatch_judge_failures_total', { reason: 'network' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(metrics, 'trajwatch_coordinator_alarms_total')).toBe(0);
  });

  it('slow, non-JSON, prose, HTTP 500 and wrong-shape answers: escalations only, no alarms; a restart over the same data pays for nothing again', async () => {
    model = await startScriptedServer((body) => {
      const text = JSON.stringify(body);
      const mode = Object.keys(MODES).find((m) => text.includes(`[mode:${m}]`));
      return mode === undefined ? { body: completion(answers()) } : MODES[mode]!;
    });
    const first = await startServe(judgeConfig(model.baseUrl));
    let metrics = '';
    try {
      await sendAll(first.url, runs);
      await waitForLines(join(first.dataDir, 'trajectories.jsonl'), (r) => r.length === runs.length);
      // Every window judged (the hanging calls end at timeoutMs): SIGTERM would defer queued ones.
      // A run's analysis manifest is written once its judged part is settled: one per run.
      await waitForLines<Row>(
        join(first.dataDir, 'findings.jsonl'),
        (r) => r.filter((x) => x.record_kind === 'analysis-manifest').length === runs.length,
        60_000,
      );
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const paid = model.requests.length;
    expect(paid).toBeGreaterThanOrEqual(runs.length);
    const firstAll = await readRows(join(first.dataDir, 'findings.jsonl'));
    const firstRows = judged(firstAll);
    // Each run's manifest names its windows: judged (escalated with the failure) or not sampled, none deferred.
    for (const m of firstAll.filter((x) => x.record_kind === 'analysis-manifest')) {
      const fates = m.windows.map((w: Row) => w.fate as string);
      expect(fates).toContain('judged');
      expect(fates.every((f: string) => f === 'judged' || f === 'not-sampled')).toBe(true);
    }
    const failureKinds = new Set(firstRows.map((f) => f.observation.values.failure?.kind));
    expect([...failureKinds].sort()).toEqual(['bad-answer', 'bad-response', 'http', 'timeout']);
    for (const f of firstRows) {
      expect(f.observation.values.answer).toBeNull();
      expect(f.observation.values.recommendation.action).toBe('escalate');
    }
    expect(await readRows(join(first.dataDir, 'alarms.jsonl'))).toEqual([]);

    // Restart over the same data directory and send the same runs again: the ledger answers.
    // The revision memory is off for this: with it on, the same runs are duplicates of remembered
    // revisions and nothing is analyzed again (test/reliability/restart-revisions.test.ts).
    const second = await startServe({ ...judgeConfig(model.baseUrl), revisionMemory: { enabled: false } }, ['--data-dir', first.dataDir]);
    try {
      await sendAll(second.url, runs);
      await waitForLines(join(first.dataDir, 'findings.jsonl'), (r) => judged(r).length >= 2 * firstRows.length);
      metrics = await (await fetch(`${second.url}/metrics`)).text();
    } finally {
      expect(await second.stop()).toBe(0);
    }
    expect(model.requests.length).toBe(paid);
    expect(metricValue(metrics, 'trajwatch_judge_calls_total', { outcome: 'called' })).toBe(0);
    expect(metricValue(metrics, 'trajwatch_judge_calls_total', { outcome: 'replayed' })).toBeGreaterThanOrEqual(runs.length);
    expect(metricValue(metrics, 'trajwatch_coordinator_alarms_total')).toBe(0);
    expect(await readRows(join(first.dataDir, 'alarms.jsonl'))).toEqual([]);
  });
});
