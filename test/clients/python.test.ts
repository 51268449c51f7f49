/**
 * The official OpenTelemetry Python SDK (`opentelemetry-sdk`) with the OTLP exporters
 * `opentelemetry-exporter-otlp-proto-grpc` and `-proto-http`, installed from PyPI into
 * .cache/python-otel by scripts/setup/python-env.sh. test/clients/python/agent_loop.py emits
 * GenAI-convention spans for a small tool-using loop and is configured only through the
 * standard OTEL_EXPORTER_OTLP_* environment variables, as an unmodified app would be.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindGrpcReceiver, closeGrpcReceiver, createGrpcReceiver } from '../../src/ingest/otlp/grpc-receiver.ts';
import { ReceiverConfigSchema } from '../../src/ingest/otlp/receiver-config.ts';
import type { DecodedRequest } from '../../src/ingest/span.ts';
import { type ClientTarget, startClientTarget, toolSteps } from './harness.ts';

const run = promisify(execFile);
const ENV_SCRIPT = new URL('../../scripts/setup/python-env.sh', import.meta.url).pathname;
const AGENT = new URL('./python/agent_loop.py', import.meta.url).pathname;

let target: ClientTarget;
let python: string;
beforeAll(async () => {
  const [started, env] = await Promise.all([startClientTarget(), run('bash', [ENV_SCRIPT], { timeout: 110_000 })]);
  target = started;
  python = env.stdout.trim().split('\n').at(-1)!;
});
afterAll(async () => {
  await target.stop();
});

const cases: { name: string; protocol: string; compression: string; endpoint: () => string }[] = [
  { name: 'OTLP/gRPC', protocol: 'grpc', compression: 'none', endpoint: () => target.grpcUrl },
  { name: 'OTLP/gRPC, gzip', protocol: 'grpc', compression: 'gzip', endpoint: () => target.grpcUrl },
  { name: 'OTLP/HTTP protobuf', protocol: 'http/protobuf', compression: 'none', endpoint: () => `${target.httpUrl}/v1/traces` },
  {
    name: 'OTLP/HTTP protobuf, gzip',
    protocol: 'http/protobuf',
    compression: 'gzip',
    endpoint: () => `${target.httpUrl}/v1/traces`,
  },
];

describe('OpenTelemetry Python SDK into a running serve', () => {
  for (const c of cases) {
    it(`assembles the Python agent's trajectory sent over ${c.name}`, async () => {
      const conversation = `python-${c.protocol.replace('/', '-')}-${c.compression}`;
      const { stdout } = await run(python, [AGENT, conversation], {
        env: {
          PATH: process.env.PATH,
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: c.protocol,
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: c.endpoint(),
          // The Python gRPC exporter refuses "none" (the spec's default), so it is left unset.
          ...(c.compression === 'gzip' ? { OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'gzip' } : {}),
        },
      });
      expect(stdout.trim()).toBe('exported 6 spans');

      const t = await target.trajectory(conversation);
      expect(t.complete).toBe(true);
      expect(t.traceIds).toHaveLength(1);
      expect(t.steps.map((s) => s.kind)).toEqual(['agent', 'llm', 'tool', 'llm', 'tool', 'llm']);
      expect(t.steps.every((s) => s.convention === 'genai' && s.sessionId === conversation)).toBe(true);
      expect(t.steps.every((s) => s.service === 'python-research-agent' && s.agentName === 'research-assistant')).toBe(true);
      expect(t.steps.filter((s) => s.kind === 'llm').every((s) => s.model === 'gpt-4o-mini')).toBe(true);

      const [search, fetch] = toolSteps(t);
      expect(search).toMatchObject({ toolName: 'search_docs', toolCallId: 'call_1' });
      expect(search!.args?.parsed).toEqual({ query: 'OTLP gRPC default port', top_k: 2 });
      expect(JSON.parse(search!.result!)).toEqual([{ title: 'OTLP Specification', snippet: 'OTLP/gRPC listens on 4317' }]);
      expect(search!.error).toBeUndefined();
      expect(fetch).toMatchObject({ toolName: 'fetch_page', toolCallId: 'call_2' });
      expect(fetch!.args?.parsed).toEqual({ url: 'https://example.invalid/otlp' });
      expect(fetch!.error).toMatchObject({ type: 'ToolFailed', message: 'connection refused: https://example.invalid/otlp' });
      expect(fetch!.result).toBeUndefined();
    });
  }

  for (const refusal of ['trajectory-log-backlog', 'max-buffered-bytes']) {
    it(`retries, as the real exporter does, a gRPC export throttled for ${refusal}, and loses nothing`, async () => {
      // A receiver whose target refuses the first call, then accepts: the Python exporter
      // must read the retryable status (and its RetryInfo) and send the same batch again.
      const statuses: string[] = [];
      const accepted: DecodedRequest[] = [];
      let refusals = 1;
      const server = createGrpcReceiver(
        ReceiverConfigSchema.parse({ retryAfterSeconds: 1 }),
        { admission: () => (refusals-- > 0 ? refusal : undefined), accept: (r) => accepted.push(r) },
        (o) => statuses.push(o.status),
      );
      const port = await bindGrpcReceiver(server, { host: '127.0.0.1', port: 0 });
      try {
        const { stdout } = await run(python, [AGENT, `python-throttled-${refusal}`], {
          env: {
            PATH: process.env.PATH,
            OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}`,
          },
        });
        expect(stdout.trim()).toBe('exported 6 spans');
      } finally {
        await closeGrpcReceiver(server);
      }
      expect(statuses).toEqual([refusal === 'max-buffered-bytes' ? 'RESOURCE_EXHAUSTED' : 'UNAVAILABLE', 'OK']);
      expect(accepted.flatMap((r) => r.spans.map((s) => s.name)).sort()).toEqual([
        'chat gpt-4o-mini',
        'chat gpt-4o-mini',
        'chat gpt-4o-mini',
        'execute_tool fetch_page',
        'execute_tool search_docs',
        'invoke_agent research-assistant',
      ]);
    });
  }
});
