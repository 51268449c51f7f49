// An alert end to end: a real Prometheus scrapes a real `trajwatch serve`, evaluates the
// shipped alerting rules (durations scaled down, nothing else changed) and sends to a real
// Alertmanager (Debian's package), which delivers the firing alert and then its resolution
// to a webhook receiver: an HTTP server in this test. The judge's model is an in-process
// stand-in (test/helpers/model-stand-in.ts) with one question certified, so serve raises a
// real coordinator alarm.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedServer } from '../judge/scripted-chat-server.ts';
import { CERTIFIED_QUESTION, CLAIMS_DONE, calibrateWithStandIn, startModelStandIn } from '../helpers/model-stand-in.ts';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { freePort } from './free-port.ts';
import { type PrometheusProcess, startPrometheus } from './prometheus.ts';
import { RULES_FILE } from './shipped-rules.ts';

const run = promisify(execFile);
const SCRIPTS = new URL('../../scripts/setup/alertmanager/', import.meta.url).pathname;

/**
 * The shipped rules with every duration (`for:`, ranges, offsets) divided by 60 — minutes
 * become seconds, hours minutes — so an alert fires and resolves within a test. Expressions,
 * labels and annotations are the shipped ones.
 */
function scaledRules(text: string): string {
  return text.replace(/(for: |\[|offset )(\d+)([mh])\b/g, (_all, lead: string, n: string, unit: string) => `${lead}${n}${unit === 'm' ? 's' : 'm'}`);
}

interface Notification {
  status: 'firing' | 'resolved';
  alerts: { status: string; labels: Record<string, string>; annotations: Record<string, string> }[];
}

/** A webhook receiver: keeps every notification Alertmanager POSTs. */
async function startWebhook(): Promise<{ url: string; received: Notification[]; server: Server }> {
  const received: Notification[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push(JSON.parse(body) as Notification);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/alerts`, received, server };
}

async function until<T>(what: string, get: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('an alert from trajwatch through Prometheus and Alertmanager to a webhook', () => {
  let serve: ServeProcess;
  let prom: PrometheusProcess | undefined;
  let amDir: string | undefined;
  let webhook: Awaited<ReturnType<typeof startWebhook>>;
  let model: ScriptedServer | undefined;

  beforeAll(async () => {
    webhook = await startWebhook();
    amDir = await mkdtemp(join(tmpdir(), 'trajwatch-am-'));
    // One notification per alert name, flushed each second; resolutions are sent too.
    const amConfig = join(amDir, 'alertmanager.yml');
    await writeFile(
      amConfig,
      [
        'route:',
        '  receiver: test-webhook',
        "  group_by: ['alertname', 'instance', 'reason', 'transport', 'question', 'service', 'agent']",
        '  group_wait: 1s',
        '  group_interval: 1s',
        '  repeat_interval: 1h',
        'receivers:',
        '  - name: test-webhook',
        '    webhook_configs:',
        `      - url: '${webhook.url}'`,
        '        send_resolved: true',
        '',
      ].join('\n'),
    );
    const amPort = await freePort();
    await run(join(SCRIPTS, 'start.sh'), ['--config', amConfig, '--port', String(amPort), '--dir', amDir], { timeout: 240_000 }).catch(
      (err: Error & { stderr?: string }) => {
        throw new Error(`could not start Alertmanager with scripts/setup/alertmanager/start.sh: ${err.message}\n${err.stderr ?? ''}`);
      },
    );
    const rules = join(amDir, 'alerts.yml');
    await writeFile(rules, scaledRules(readFileSync(RULES_FILE, 'utf8')));
    model = await startModelStandIn();
    const judge = { enabled: true, client: { baseUrl: model.baseUrl, model: 'judge', apiKeyEnv: null, retries: 0 }, sampling: { rate: 0 } };
    serve = await startServe({ judge: { ...judge, certificatesDir: await calibrateWithStandIn(judge) } });
    prom = await startPrometheus(`127.0.0.1:${serve.port}`, { rules, alertmanager: `127.0.0.1:${amPort}` });
  }, 300_000);

  afterAll(async () => {
    await prom?.stop();
    await serve?.stop();
    await model?.close();
    if (amDir !== undefined) await run(join(SCRIPTS, 'stop.sh'), ['--dir', amDir], { timeout: 30_000 });
    webhook?.server.close();
  });

  it('the test rules differ from the shipped ones in their durations only', () => {
    const shipped = readFileSync(RULES_FILE, 'utf8');
    const scaled = scaledRules(shipped);
    expect(scaled).not.toBe(shipped);
    const durationless = (t: string) => t.replace(/(for: |\[|offset )\d+[smh]\b/g, '$1D');
    expect(durationless(scaled)).toBe(durationless(shipped));
    expect(scaled).toContain('for: 5s');
    expect(scaled).not.toMatch(/(for: |\[|offset )\d+h\b/);
  });

  it('delivers TrajwatchRefusingInput while serve refuses requests, then its resolution', async () => {
    const refusing = (n: Notification) => n.alerts.filter((a) => a.labels['alertname'] === 'TrajwatchRefusingInput');
    // Undecodable bodies, refused whole (400, reason undecodable), for longer than `for` (5 s) plus the rate window.
    let stop = false;
    const traffic = (async () => {
      while (!stop) {
        const res = await fetch(`${serve.url}/v1/traces`, { method: 'POST', body: 'garbage', headers: { 'content-type': 'application/json' } });
        expect(res.status).toBe(400);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    let firing: Notification['alerts'][number];
    try {
      firing = await until(
        'a firing TrajwatchRefusingInput',
        () => webhook.received.flatMap((n) => refusing(n).filter((a) => a.status === 'firing'))[0],
        90_000,
      );
    } finally {
      stop = true;
      await traffic;
    }
    expect(firing.labels).toMatchObject({
      alertname: 'TrajwatchRefusingInput',
      severity: 'warning',
      reason: 'undecodable',
      transport: 'http',
      instance: `127.0.0.1:${serve.port}`,
    });
    expect(firing.annotations['summary']).toBe('trajwatch refuses OTLP requests (undecodable, http)');
    expect(firing.annotations['runbook']).not.toBe('');
    // Traffic stopped: the rate falls to 0 within its 5 s window; Prometheus resolves, Alertmanager says so.
    const resolved = await until(
      'TrajwatchRefusingInput resolved',
      () => webhook.received.find((n) => n.status === 'resolved' && refusing(n).some((a) => a.status === 'resolved')),
      90_000,
    );
    expect(refusing(resolved)[0]!.labels['reason']).toBe('undecodable');
  }, 200_000);

  it('delivers TrajwatchCoordinatorAlarm for the question, service and agent of a real alarm, then its end', async () => {
    const traceId = 'cbf92f3577b34da6a3ce929d0e0e473e';
    const root = traceId.slice(0, 16);
    const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
    // An agent run whose tool result claims completion: the stand-in answers yes, the certified question acts.
    const spans = [
      {
        traceId,
        spanId: root,
        name: 'invoke_agent refund-planner',
        startTimeUnixNano: '500',
        endTimeUnixNano: '3000',
        status: { code: 1 },
        attributes: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'refund-planner')],
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
        ],
      },
    ];
    const body = JSON.stringify({ resourceSpans: [{ resource: { attributes: [attr('service.name', 'checkout-agent')] }, scopeSpans: [{ spans }] }] });
    expect((await fetch(`${serve.url}/v1/traces`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).status).toBe(200);
    const alarm = (n: Notification) => n.alerts.filter((a) => a.labels['alertname'] === 'TrajwatchCoordinatorAlarm');
    const firing = await until(
      'a firing TrajwatchCoordinatorAlarm',
      () => webhook.received.flatMap((n) => alarm(n).filter((a) => a.status === 'firing'))[0],
      90_000,
    );
    // The alarm's first occurrence fires (its series was born at 1), with the labels an operator routes by.
    expect(firing.labels).toMatchObject({ severity: 'critical', question: CERTIFIED_QUESTION, service: 'checkout-agent', agent: 'refund-planner' });
    expect(firing.annotations['summary']).toBe(`Coordinator alarm: ${CERTIFIED_QUESTION} in checkout-agent / refund-planner`);
    // No further alarm: after the (scaled) 5 s window the alert ends, and Alertmanager says so.
    await until('TrajwatchCoordinatorAlarm resolved', () => webhook.received.find((n) => alarm(n).some((a) => a.status === 'resolved')), 90_000);
  }, 200_000);
});
