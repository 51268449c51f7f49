import { afterEach, describe, expect, it } from 'vitest';
import { agentRunRequest, postJson } from '../reliability/agent-run.ts';
import { startServe, type ServeProcess } from '../helpers/serve.ts';
import { answers, completion, type ScriptedServer, startScriptedServer } from '../judge/scripted-chat-server.ts';

// The model endpoint is a stand-in HTTP server (no real LLM can run here): it answers
// 500 or garbage while told to, and real answers otherwise; serve talks real HTTP to it.

let serve: ServeProcess | undefined;
let model: ScriptedServer | undefined;
afterEach(async () => {
  await serve?.stop();
  await model?.close();
  serve = undefined;
  model = undefined;
});

const judgeConfig = (baseUrl: string) => ({
  assembler: { quietPeriodMs: 100 },
  judge: { enabled: true, client: { baseUrl, model: 'judge-m', apiKeyEnv: null, retries: 0, backoffMs: 10, timeoutMs: 2000 }, sampling: { rate: 0 } },
});

type Health = {
  status: string;
  components: Record<string, string>;
  judge: { state: string; reason?: string; endpoint?: string; model?: string; certificates?: number };
};
const health = async (url: string, path = '/healthz'): Promise<{ code: number; body: Health }> => {
  const res = await fetch(`${url}${path}`);
  return { code: res.status, body: (await res.json()) as Health };
};
async function until(url: string, ok: (h: Health) => boolean, timeoutMs = 20_000): Promise<Health> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await health(url);
    if (ok(body)) return body;
    if (Date.now() > end) throw new Error(`healthz never matched: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const count = (text: string, s: string) => text.split(s).length - 1;
let traces = 0;
const run = (userText: string) => ({ traceId: `4ea17${(++traces).toString(16).padStart(27, '0')}`, userText });

describe('serve tells of its judge', () => {
  it('logs at start which endpoint and model the judge uses and how many certificates it loaded', async () => {
    serve = await startServe(judgeConfig('http://127.0.0.1:9/v1'));
    await until(serve.url, () => serve!.output().includes('judge on:'));
    expect(serve.output()).toContain('judge on: endpoint http://127.0.0.1:9/v1, model judge-m (no API key); 0 certificate(s) loaded from');
    const { code, body } = await health(serve.url);
    expect(code).toBe(200);
    expect(body.judge).toMatchObject({ state: 'no-calls-yet', endpoint: 'http://127.0.0.1:9/v1', model: 'judge-m', certificates: 0 });
    expect(Object.keys(body.components)).toContain('receiver.http');
    expect((await health(serve.url, '/readyz')).code).toBe(200);
  });

  it('with the judge off, says so at start and on /healthz', async () => {
    serve = await startServe({});
    await until(serve.url, () => serve!.output().includes('judge off'));
    expect((await health(serve.url)).body).toMatchObject({ status: 'ok', judge: { state: 'off' } });
  });

  it('logs the first failure once, the change of reason, and the recovery; /healthz shows the state', async () => {
    let mode = 'http-500';
    model = await startScriptedServer(() =>
      mode === 'http-500'
        ? { status: 500, body: { error: 'down' } }
        : mode === 'prose'
          ? { body: { model: 'm', choices: [{ message: { content: 'fine, I think' } }] } }
          : { body: completion(answers()) },
    );
    serve = await startServe(judgeConfig(model.baseUrl));
    for (let i = 0; i < 3; i++) expect((await postJson(serve.url, agentRunRequest(run('Deploy.')))).status).toBe(200);
    const failing = await until(serve.url, (h) => h.judge.state === 'failing');
    expect(failing).toMatchObject({ status: 'degraded', judge: { reason: 'http 500' } });
    // The judge is a component like the others: degraded, with its reason; input is still taken.
    expect(failing.components['judge']).toBe('degraded: http 500');
    expect(
      Object.entries(failing.components)
        .filter(([name]) => name !== 'judge')
        .every(([, h]) => h === 'ok'),
    ).toBe(true);
    expect((await health(serve.url)).code).toBe(200);
    expect((await health(serve.url, '/readyz')).code).toBe(200);
    // Repeats of the same reason are not logged again.
    await new Promise((r) => setTimeout(r, 1500));
    expect(count(serve.output(), 'judge calls failing: http 500')).toBe(1);

    mode = 'prose';
    expect((await postJson(serve.url, agentRunRequest(run('Deploy again.')))).status).toBe(200);
    await until(serve.url, (h) => h.judge.reason === 'bad-answer');
    expect(serve.output()).toContain('judge calls failing: now bad-answer');

    mode = 'answer';
    expect((await postJson(serve.url, agentRunRequest(run('Deploy once more.')))).status).toBe(200);
    const recovered = await until(serve.url, (h) => h.judge.state === 'ok');
    expect(recovered.status).toBe('ok');
    expect(recovered.components['judge']).toBe('ok');
    expect(serve.output()).toContain('judge calls failing: recovered');
  }, 60_000);
});

describe('serve tells of a failing component', () => {
  it('with the Kafka broker down past the outbox bound: /healthz and /readyz 503 name the Kafka sink and its reason, which is what input is refused with', async () => {
    // Nothing listens on port 9: every produce fails, the outbox (two records) fills.
    serve = await startServe({ assembler: { quietPeriodMs: 100 }, kafka: { brokers: ['127.0.0.1:9'], maxOutboxRecords: 2, closeTimeoutMs: 0 } });
    let refusal: { status: number; body: string } | undefined;
    for (let i = 0; i < 40 && refusal === undefined; i++) {
      const res = await postJson(serve.url, agentRunRequest(run('Deploy.')));
      if (res.status === 503) refusal = { status: res.status, body: res.text };
      else await new Promise((r) => setTimeout(r, 150));
    }
    expect(refusal, serve.output().slice(-2000)).toBeDefined();
    expect(JSON.parse(refusal!.body)).toMatchObject({ message: 'trajwatch is at its limit (kafka-outbox-full); retry later' });
    const { code, body } = await health(serve.url);
    expect(code).toBe(503);
    expect(body.status).toBe('unhealthy');
    expect(body.components).toMatchObject({ kafka: 'kafka-outbox-full', 'local-log': 'ok', 'trajectory-log': 'ok', judge: 'ok' });
    expect((await health(serve.url, '/readyz')).code).toBe(503);
  }, 60_000);
});
