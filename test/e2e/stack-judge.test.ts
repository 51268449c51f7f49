// The stack with the judge on: the judge's LLM endpoint cannot run here, so an in-process Chat
// Completions server stands in for it (test/helpers/model-stand-in.ts: yes to "unverified
// completion" when a run claims it is done), and its question is certified the way an operator
// would (calibrateWithStandIn). `npm run stack -- up --member-config` adds that judge to both
// members; an agent run that claims completion goes through the Collector; the coordinator alarm
// must reach Alertmanager through Prometheus's rules, and `demo` must print it.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoReport } from '../../scripts/stack/demo.ts';
import { mappingOf, ownsPid, readState, type StackState } from '../../scripts/stack/state.ts';
import { kafkaForTests } from '../helpers/kafka.ts';
import { CERTIFIED_QUESTION, CLAIMS_DONE, calibrateWithStandIn, startModelStandIn } from '../helpers/model-stand-in.ts';
import type { ScriptedServer } from '../judge/scripted-chat-server.ts';
import { BUILD_TIMEOUT_MS, ensureCollector } from '../ops/otelcol.ts';

const run = promisify(execFile);
const MAIN = new URL('../../scripts/stack/main.ts', import.meta.url).pathname;
const stack = (...args: string[]) => run(process.execPath, [MAIN, ...args], { timeout: 600_000 });

let model: ScriptedServer | undefined;
let stateDir: string | undefined;
let state: StackState;

beforeAll(async () => {
  await ensureCollector();
  const brokers = await kafkaForTests();
  if (brokers === undefined) throw new Error('no Kafka broker for this test (see test/helpers/kafka.ts for why)');
  model = await startModelStandIn();
  const judge = {
    enabled: true,
    client: {
      baseUrl: model.baseUrl,
      model: 'judge',
      apiKeyEnv: null,
      retries: 0,
      pricing: { inputPerMillionTokens: 0.5, outputPerMillionTokens: 1.5, currency: 'USD' },
    },
    sampling: { rate: 0 },
  };
  const certificatesDir = await calibrateWithStandIn(judge);
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-stack-judge-'));
  const memberConfig = join(dir, 'judge.json');
  await writeFile(memberConfig, JSON.stringify({ judge: { ...judge, certificatesDir } }));
  stateDir = join(dir, 'state');
  await stack('up', '--state-dir', stateDir, '--kafka', brokers.join(','), '--suffix', randomUUID().slice(0, 8), '--member-config', memberConfig);
  state = (await readState(stateDir))!;
}, BUILD_TIMEOUT_MS + 300_000);

afterAll(async () => {
  if (stateDir !== undefined) await stack('down', '--state-dir', stateDir);
  await model?.close();
}, 120_000);

/** An OTLP/JSON agent run whose tool result claims the task is done (the stand-in answers yes). */
function claimsDone(traceId: string, conversation: string): string {
  const root = traceId.slice(0, 16);
  const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
  const spans = [
    {
      traceId,
      spanId: root,
      name: 'invoke_agent refund-planner',
      startTimeUnixNano: '500',
      endTimeUnixNano: '3000',
      status: { code: 1 },
      attributes: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'refund-planner'), attr('gen_ai.conversation.id', conversation)],
    },
    {
      traceId,
      spanId: `${root.slice(0, 15)}1`,
      parentSpanId: root,
      name: 'execute_tool lookup',
      startTimeUnixNano: '1000',
      endTimeUnixNano: '2000',
      status: { code: 1 },
      attributes: [
        attr('gen_ai.operation.name', 'execute_tool'),
        attr('gen_ai.tool.name', 'lookup'),
        attr('gen_ai.tool.call.arguments', '{"q":"order 42"}'),
        attr('gen_ai.tool.call.result', `refund issued, ${CLAIMS_DONE}`),
        attr('gen_ai.conversation.id', conversation),
      ],
    },
  ];
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [attr('service.name', 'checkout-agent')] }, scopeSpans: [{ spans }] }] });
}

describe('npm run stack with the judge on (a stand-in model endpoint, a certified question)', () => {
  it('a run that claims completion becomes a coordinator alarm in Alertmanager, and demo prints it', async () => {
    const collector = `http://${mappingOf(state).addr('otel-collector', 'otlpHttp')}/v1/traces`;
    const res = await fetch(collector, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: claimsDone(randomBytes(16).toString('hex'), `claims-${randomUUID()}`),
    });
    expect(res.status).toBe(200);
    const { stdout } = await stack('demo', '--state-dir', stateDir!, '--json', '--alarm-wait-ms', '180000');
    const report = JSON.parse(stdout) as DemoReport;
    const alarms = report.alerts.filter((a) => a.alertname === 'TrajwatchCoordinatorAlarm');
    expect(alarms.map((a) => ({ question: a.labels.question, service: a.labels.service }))).toContainEqual({
      question: CERTIFIED_QUESTION,
      service: 'checkout-agent',
    });
    expect(report.missing).toEqual([]);
    const text = await stack('demo', '--state-dir', stateDir!, '--alarm-wait-ms', '1');
    expect(text.stdout).toMatch(new RegExp(`alert in Alertmanager: TrajwatchCoordinatorAlarm question=${CERTIFIED_QUESTION} service=checkout-agent`));
    for (const s of state.services) if (s.pid !== undefined) expect(await ownsPid(s.pid, stateDir!), s.name).toBe(true);
  }, 420_000);
});
