import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { agentRunRequest } from '../reliability/agent-run.ts';

// Credentials a running serve holds: the receivers' token and the Kafka sink's SASL password.
const TOKEN = 'tw-receiver-token-3c7a9b1e54d2';
const SASL_PASSWORD = 'tw-sasl-password-8e2f61d0';

describe('serve logs no credential, at any level', () => {
  let serve: ServeProcess;
  const saved = { ...process.env };
  beforeAll(async () => {
    // The child inherits these: the secrets by name from the environment, every level written.
    process.env['TW_TEST_RECEIVER_TOKEN'] = TOKEN;
    process.env['TW_TEST_SASL_PASSWORD'] = SASL_PASSWORD;
    process.env['TRAJWATCH_LOG_LEVEL'] = 'trace';
    serve = await startServe({
      receiver: { auth: { tokenEnv: 'TW_TEST_RECEIVER_TOKEN' } },
      // A broker that refuses connections: delivery fails, and the sink logs the failure.
      kafka: { brokers: ['127.0.0.1:1'], sasl: { mechanism: 'plain', username: 'tw', passwordEnv: 'TW_TEST_SASL_PASSWORD' } },
    });
  });
  afterAll(async () => {
    await serve.stop();
    process.env = saved;
  });

  it('refused and accepted requests, a failing Kafka sink and the shutdown leave neither secret in the output', async () => {
    const post = (authorization: string) =>
      fetch(`${serve.url}/v1/traces`, {
        method: 'POST',
        body: JSON.stringify(agentRunRequest({ traceId: '7b000000000000000000000000000001' })),
        headers: { 'content-type': 'application/json', authorization },
      });
    expect((await post(`Bearer wrong-${TOKEN}`)).status).toBe(401);
    expect((await post(`Bearer ${TOKEN}`)).status).toBe(200);
    // The trajectory closes (quiet period 200 ms), its findings go to the failing Kafka sink.
    const deadline = Date.now() + 10_000;
    while (!/kafka delivery failing/.test(serve.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    // Not asserting the exit code: with the broker down, the drain waits for acknowledgements and
    // the shutdown ends at its 10 s bound (exit 1), as it does before this test.
    await serve.stop();
    const output = serve.output();
    expect(output).toMatch(/rejecting OTLP requests: unauthenticated/);
    expect(output).toMatch(/kafka delivery failing/);
    expect(output).not.toContain(TOKEN);
    expect(output).not.toContain(SASL_PASSWORD);
  });
});
