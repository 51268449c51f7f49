/**
 * The OpenTelemetry Node SDK (`@opentelemetry/sdk-node`, NodeSDK) with each OTLP trace
 * exporter, in its own process: `scripts/dev/demo.ts` (`npm run demo`) is the app, so this also
 * tests the demo. GenAI semantic conventions, instrumented by hand as an app would.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientTarget, startClientTarget, toolSteps } from './harness.ts';

const DEMO = new URL('../../scripts/dev/demo.ts', import.meta.url).pathname;
const run = promisify(execFile);

let target: ClientTarget;
beforeAll(async () => {
  target = await startClientTarget();
});
afterAll(async () => {
  await target.stop();
});

const cases: { name: string; protocol: string; compression: string; content?: 'logs'; endpoint: () => string }[] = [
  { name: 'OTLP/HTTP JSON', protocol: 'http/json', compression: 'none', endpoint: () => target.httpUrl },
  { name: 'OTLP/HTTP protobuf', protocol: 'http/protobuf', compression: 'none', endpoint: () => target.httpUrl },
  { name: 'OTLP/HTTP protobuf, gzip', protocol: 'http/protobuf', compression: 'gzip', endpoint: () => target.httpUrl },
  { name: 'OTLP/gRPC', protocol: 'grpc', compression: 'none', endpoint: () => target.grpcUrl },
  { name: 'OTLP/gRPC, gzip', protocol: 'grpc', compression: 'gzip', endpoint: () => target.grpcUrl },
  // Content as OTLP log records (the GenAI details event), the spans carrying none: the same trajectory.
  { name: 'OTLP/HTTP protobuf, content as log events', protocol: 'http/protobuf', compression: 'none', content: 'logs', endpoint: () => target.httpUrl },
  { name: 'OTLP/gRPC, content as log events', protocol: 'grpc', compression: 'gzip', content: 'logs', endpoint: () => target.grpcUrl },
];

describe('OpenTelemetry Node SDK (NodeSDK) into a running serve', () => {
  for (const c of cases) {
    it(`assembles the demo agent's trajectory sent over ${c.name}`, async () => {
      const conversation = `sdk-node-${c.protocol.replace('/', '-')}-${c.compression}${c.content === undefined ? '' : `-${c.content}`}`;
      const { stdout } = await run(process.execPath, [
        DEMO,
        '--endpoint',
        c.endpoint(),
        '--protocol',
        c.protocol,
        '--compression',
        c.compression,
        '--conversation',
        conversation,
        ...(c.content === undefined ? [] : ['--content', c.content]),
      ]);
      expect(stdout).toContain(`sent 12 spans of conversation ${conversation}`);

      const t = await target.trajectory(conversation);
      expect(t.complete).toBe(true);
      expect(t.traceIds).toHaveLength(1);
      expect(t.steps.filter((s) => s.kind === 'agent').map((s) => s.agentName)).toEqual(['support-agent']);
      expect(t.steps.filter((s) => s.kind === 'llm')).toHaveLength(6);
      expect(t.steps.every((s) => s.convention === 'genai' && s.sessionId === conversation)).toBe(true);
      expect(t.steps.every((s) => s.service === 'trajwatch-demo-support-agent')).toBe(true);

      const tools = toolSteps(t);
      expect(tools.map((s) => s.toolName)).toEqual(['search_orders', 'get_order_status', 'get_order_status', 'issue_refund', 'send_email']);
      expect(tools.map((s) => s.toolCallId)).toEqual(['call_1', 'call_2', 'call_3', 'call_4', 'call_5']);
      expect(tools[0]!.args?.parsed).toEqual({ customer_id: 'c-1042', status: 'delivered' });
      expect(tools[0]!.result).toBe('[{"order_id":"A-77","total":129.9}]');
      expect(tools[1]!.error).toMatchObject({ type: 'TimeoutError', message: 'orders-api did not answer within 5000 ms' });
      expect(tools[1]!.result).toBeUndefined();
      expect(tools[2]!.args?.digest).toBe(tools[1]!.args?.digest);
      expect(tools[2]!.error).toBeUndefined();
      expect(tools[3]!.args?.parsed).toEqual({ order_id: 'A-77', amount: 129.9, currency: 'EUR' });
      expect(tools[4]!.result).toBe('{"message_id":"m-88"}');
      expect(t.steps.filter((s) => s.kind === 'llm' && s.result === undefined)).toEqual([]);
    });
  }

  it("the demo's run yields the findings the demo announces, once the trajectory closes", async () => {
    // The cases above ran first (vitest keeps order within a file); read their findings.
    const conversation = 'sdk-node-http-protobuf-none';
    await target.trajectory(conversation);
    const findings = (await readFile(join(target.serve.dataDir, 'findings.jsonl'), 'utf8'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { area: string; claim: string; subject: { trajectory_key: string }; record_kind?: string })
      // The log also holds each trajectory's analysis manifest: findings are the rows without a record_kind.
      .filter((f) => f.record_kind === undefined && f.subject.trajectory_key === conversation);
    const areas = findings.map((f) => f.area).sort();
    expect(areas).toEqual(['error-output', 'tool.repetition', 'unguarded-send', 'unguarded-send']);
    expect(
      findings
        .filter((f) => f.area === 'unguarded-send')
        .map((f) => f.claim)
        .join(' '),
    ).toMatch(/issue_refund.*send_email|send_email.*issue_refund/);
  });

  it('the demo says so and exits 1 when nothing listens at the endpoint', async () => {
    const failed = await run(process.execPath, [DEMO, '--endpoint', 'http://127.0.0.1:9', '--protocol', 'http/protobuf', '--timeout-ms', '500']).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/could not send to http:\/\/127\.0\.0\.1:9/);
  });
});
