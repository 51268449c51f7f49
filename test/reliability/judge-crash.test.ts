import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SpanWal } from '../../src/ingest/wal/span-wal.ts';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { answers, completion, type ScriptedServer, startScriptedServer } from '../judge/scripted-chat-server.ts';
import { agentRunRequest, postJson } from './agent-run.ts';
import { collect } from '../helpers/collect.ts';

// A stand-in HTTP server plays the model endpoint (no real LLM can run here); serve is a real
// process killed with SIGKILL while its judge call is out.

type Row = Record<string, any>;

let model: ScriptedServer | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const TRACE = 'c4a5e000000000000000000000000001';

function judgeConfig(baseUrl: string) {
  return {
    assembler: { quietPeriodMs: 100 },
    judge: {
      enabled: true,
      client: { baseUrl, model: 'm', apiKeyEnv: null, retries: 0, backoffMs: 10, timeoutMs: 60_000 },
      // One window: the event window at the failing deploy (an L0 hit).
      sampling: { rate: 0, triggers: { outbound: false, terminal: false } },
    },
  };
}

const isManifest = (r: Row) => r.record_kind === 'analysis-manifest';
const escalations = (rows: Row[]) => rows.filter((r) => r.method?.kind === 'judged' && r.observation?.values?.failure?.kind === 'intent-without-result');

describe('SIGKILL while a judge call is out (write-ahead log)', () => {
  it('keeps the trajectory in the log until its judged part is durable: after a restart the intent without a result becomes an escalation, paid for once', async () => {
    let answering = false;
    model = await startScriptedServer(() => (answering ? { body: completion(answers()) } : { hang: true }));
    const first = await startServe(judgeConfig(model.baseUrl));
    const dataDir = first.dataDir;
    const findingsPath = join(dataDir, 'findings.jsonl');
    expect((await postJson(first.url, agentRunRequest({ traceId: TRACE }))).status).toBe(200);
    // The inline findings are durable and the judge's intent is in the ledger; the call hangs.
    await waitForLines(findingsPath, (r) => r.some((f) => f.area === 'error-output'));
    await waitForLines<Row>(join(dataDir, 'judge', 'ledger.jsonl'), (r) => r.some((x) => x.type === 'intent'));
    // Long enough for the log's release timer (500 ms) to have released a finished request.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(model.requests).toHaveLength(1);
    expect(
      (await readFile(findingsPath, 'utf8'))
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Row)
        .filter(isManifest),
    ).toEqual([]);

    const killed = new Promise((resolve) => first.child.once('exit', (_code, signal) => resolve(signal)));
    first.child.kill('SIGKILL');
    expect(await killed).toBe('SIGKILL');

    answering = true;
    const second = await startServe(judgeConfig(model.baseUrl), ['--data-dir', dataDir]);
    try {
      expect(second.output()).toMatch(/replayed 1 request\(s\) from the write-ahead log/);
      const rows = await waitForLines<Row>(findingsPath, (r) => r.some(isManifest), 20_000);
      const found = escalations(rows);
      // Every question of the window escalates, naming why; nothing was paid for again.
      expect(found.length).toBeGreaterThan(0);
      for (const f of found) expect(f.observation.values.recommendation.action).toBe('escalate');
      expect(model.requests).toHaveLength(1);
      const manifest = rows.find(isManifest)!;
      expect(manifest.subject.trajectory_key).toBe(TRACE);
      const judged = manifest.windows.filter((w: Row) => w.fate === 'judged');
      expect(judged).toHaveLength(1);
      expect(judged[0].reason).toBe('intent-without-result');
      for (const f of found) expect(judged[0].finding_ids).toContain(f.finding_id);
    } finally {
      expect(await second.stop()).toBe(0);
    }
    // A clean stop releases what it finished: nothing is left to replay.
    const { wal, records } = await SpanWal.open(join(dataDir, 'wal'), { maxBytes: 1 << 30, segmentBytes: 1 << 24 });
    await wal.close();
    expect(await collect(records)).toEqual([]);
  }, 60_000);
});
