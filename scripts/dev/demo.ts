/**
 * `npm run demo`: sends one realistic tool-using agent run through the real OpenTelemetry
 * Node SDK (NodeSDK + an OTLP exporter) to a running `trajwatch serve`, then says where the
 * trajectory and its findings land. Starts nothing itself.
 *
 * The run is a support agent, instrumented with the OTel GenAI semantic conventions, that
 * looks up an order, hits a timeout, retries the same call, refunds and emails the customer
 * without any approval step: the inline checks should flag the failed call, the repeated
 * call and the two unguarded outbound actions.
 */
import { context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { logs } from '@opentelemetry/api-logs';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as HttpJsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as HttpProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as HttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as HttpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { logs as sdkLogs, NodeSDK, tracing } from '@opentelemetry/sdk-node';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { recordText } from '../../src/cli/finding-text.ts';
import { readLogLines } from '../../src/cli/local-log-files.ts';

const HELP = `Usage: npm run demo -- [options]

Sends one tool-using agent run (OTel GenAI conventions) through the OpenTelemetry Node SDK
to a running trajwatch serve.

Options:
  --endpoint URL        OTLP endpoint (default http://127.0.0.1:4318; for grpc, the
                        gRPC address, e.g. http://127.0.0.1:4317)
  --protocol P          http/protobuf (default), http/json or grpc
  --compression C       gzip or none (default none)
  --conversation ID     gen_ai.conversation.id, the trajectory key (default: a new UUID)
  --content WHERE       where the prompts, tool arguments and results go: attributes (default,
                        on the spans) or logs (OTLP log records, the GenAI
                        gen_ai.client.inference.operation.details event in each span's context,
                        as the 2026 conventions put them; the spans then carry no content)
  --timeout-ms N        how long the exporter keeps trying, retries included (default 10000)
  --runs N              how many runs to send, each its own conversation (default 1; 3 with --judge)
  --judge               then wait for serve's judge to answer each run's windows (serve started
                        with the judge on, e.g. --config examples/judge-local.yaml) and print
                        its answers and what to do next
  --data-dir DIR        serve's data directory, read by --judge (default ./data)
  --wait-ms N           how long --judge waits for the answers (default 600000)
  --help                this text
`;

type Protocol = 'http/protobuf' | 'http/json' | 'grpc';
const PROTOCOLS: readonly Protocol[] = ['http/protobuf', 'http/json', 'grpc'];

/** One tool call the scripted model asks for, and what the tool does with it. */
interface ToolTurn {
  tool: string;
  /** Simulated work. Real calls take time; without it, the JS SDK's per-span millisecond
   * clock anchoring can give back-to-back spans start times out of call order. */
  latencyMs: number;
  args: Record<string, unknown>;
  outcome: { result: unknown } | { errorType: string; message: string };
}

type ContentIn = 'attributes' | 'logs';
const CONTENT_IN: readonly ContentIn[] = ['attributes', 'logs'];
/** Where this run's content goes (set once from --content). */
let contentIn: ContentIn = 'attributes';

const MODEL = 'gpt-4o-2024-08-06';
const AGENT = 'support-agent';

/** The scripted run: what the model asks for, turn by turn, and what each tool answers. */
const TURNS: ToolTurn[] = [
  { tool: 'search_orders', latencyMs: 40, args: { customer_id: 'c-1042', status: 'delivered' }, outcome: { result: [{ order_id: 'A-77', total: 129.9 }] } },
  {
    tool: 'get_order_status',
    latencyMs: 50,
    args: { order_id: 'A-77' },
    outcome: { errorType: 'TimeoutError', message: 'orders-api did not answer within 5000 ms' },
  },
  { tool: 'get_order_status', latencyMs: 20, args: { order_id: 'A-77' }, outcome: { result: { order_id: 'A-77', state: 'delivered', damaged: true } } },
  {
    tool: 'issue_refund',
    latencyMs: 60,
    args: { order_id: 'A-77', amount: 129.9, currency: 'EUR' },
    outcome: { result: { refund_id: 'rf_5521', state: 'submitted' } },
  },
  {
    tool: 'send_email',
    latencyMs: 30,
    args: { to: 'c-1042@example.com', template: 'refund_issued', refund_id: 'rf_5521' },
    outcome: { result: { message_id: 'm-88' } },
  },
];
const FINAL_ANSWER = 'I refunded order A-77 (129.90 EUR) and emailed you the confirmation.';

function exporterFor(protocol: Protocol, endpoint: string, compression: 'gzip' | 'none', timeoutMillis: number) {
  const base = endpoint.replace(/\/+$/, '');
  // The exporters' CompressionAlgorithm enum is a string enum of exactly these values.
  const options = { compression: compression as never, timeoutMillis };
  if (protocol === 'grpc') return new GrpcExporter({ url: base, ...options });
  const url = base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
  return protocol === 'http/json' ? new HttpJsonExporter({ url, ...options }) : new HttpProtoExporter({ url, ...options });
}

function logExporterFor(protocol: Protocol, endpoint: string, compression: 'gzip' | 'none', timeoutMillis: number) {
  const base = endpoint.replace(/\/+$/, '').replace(/\/v1\/traces$/, '');
  const options = { compression: compression as never, timeoutMillis };
  if (protocol === 'grpc') return new GrpcLogExporter({ url: base, ...options });
  const url = `${base}/v1/logs`;
  return protocol === 'http/json' ? new HttpJsonLogExporter({ url, ...options }) : new HttpProtoLogExporter({ url, ...options });
}

/**
 * A step's content, where --content says: as the span's attributes, or as the GenAI details
 * event (`gen_ai.client.inference.operation.details`) in the span's context, an OTLP log record
 * carrying the same keys as attributes.
 */
function content(span: Span, attributes: Record<string, string>): void {
  if (contentIn === 'attributes') {
    span.setAttributes(attributes);
    return;
  }
  logs.getLogger('trajwatch-demo', '1.0.0').emit({
    eventName: 'gen_ai.client.inference.operation.details',
    context: trace.setSpan(context.active(), span),
    attributes,
  });
}

/** Runs `fn` inside a span that is the active context, and ends the span. */
async function inSpan<T>(name: string, attributes: Record<string, string>, fn: (span: Span) => Promise<T> | T): Promise<T> {
  const tracer = trace.getTracer('trajwatch-demo', '1.0.0');
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } finally {
      span.end();
    }
  });
}

async function runAgent(conversationId: string): Promise<void> {
  const common = { 'gen_ai.conversation.id': conversationId, 'gen_ai.agent.name': AGENT };
  await inSpan(`invoke_agent ${AGENT}`, { ...common, 'gen_ai.operation.name': 'invoke_agent' }, async (agent) => {
    const messages: unknown[] = [{ role: 'user', parts: [{ type: 'text', content: 'My order A-77 arrived damaged, I want my money back.' }] }];
    for (const [i, turn] of TURNS.entries()) {
      const callId = `call_${i + 1}`;
      const request = { type: 'tool_call', id: callId, name: turn.tool, arguments: turn.args };
      await chat(common, messages, [{ role: 'assistant', parts: [request], finish_reason: 'tool_call' }]);
      messages.push({ role: 'assistant', parts: [request] });
      const response = await inSpan(
        `execute_tool ${turn.tool}`,
        {
          ...common,
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': turn.tool,
          'gen_ai.tool.call.id': callId,
          'gen_ai.tool.type': 'function',
        },
        async (span) => {
          await sleep(turn.latencyMs);
          const args = JSON.stringify(turn.args);
          if ('result' in turn.outcome) {
            const text = JSON.stringify(turn.outcome.result);
            content(span, toolContent(request, args, text));
            return text;
          }
          content(span, toolContent(request, args, undefined));
          const error = new Error(turn.outcome.message);
          error.name = turn.outcome.errorType;
          span.recordException(error);
          span.setAttribute('error.type', turn.outcome.errorType);
          span.setStatus({ code: SpanStatusCode.ERROR, message: turn.outcome.message });
          return `${turn.outcome.errorType}: ${turn.outcome.message}`;
        },
      );
      messages.push({ role: 'tool', parts: [{ type: 'tool_call_response', id: callId, response }] });
    }
    const final = [{ role: 'assistant', parts: [{ type: 'text', content: FINAL_ANSWER }], finish_reason: 'stop' }];
    await chat(common, messages, final);
    content(agent, { 'gen_ai.output.messages': JSON.stringify(final) });
  });
}

/**
 * A tool call's content: on the span, `gen_ai.tool.call.arguments` / `.result`; in the details
 * event, the call as the `tool_call` part of the input messages and its answer as the
 * `tool_call_response` part of the output messages (docs/clients.md, "GenAI content").
 */
function toolContent(request: { id: string; name: string; arguments: unknown }, args: string, result: string | undefined): Record<string, string> {
  if (contentIn === 'attributes') return { 'gen_ai.tool.call.arguments': args, ...(result === undefined ? {} : { 'gen_ai.tool.call.result': result }) };
  const call = { role: 'assistant', parts: [{ type: 'tool_call', id: request.id, name: request.name, arguments: request.arguments }] };
  const answer = { role: 'tool', parts: [{ type: 'tool_call_response', id: request.id, response: result }] };
  return { 'gen_ai.input.messages': JSON.stringify([call]), ...(result === undefined ? {} : { 'gen_ai.output.messages': JSON.stringify([answer]) }) };
}

async function chat(common: Record<string, string>, input: unknown[], output: unknown[]): Promise<void> {
  await inSpan(
    `chat ${MODEL}`,
    {
      ...common,
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': MODEL,
      'gen_ai.response.model': MODEL,
    },
    async (span) => {
      await sleep(CHAT_LATENCY_MS);
      content(span, { 'gen_ai.input.messages': JSON.stringify(input), 'gen_ai.output.messages': JSON.stringify(output) });
    },
  );
}

const CHAT_LATENCY_MS = 25;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      endpoint: { type: 'string', default: 'http://127.0.0.1:4318' },
      protocol: { type: 'string', default: 'http/protobuf' },
      compression: { type: 'string', default: 'none' },
      conversation: { type: 'string' },
      content: { type: 'string', default: 'attributes' },
      'timeout-ms': { type: 'string', default: '10000' },
      runs: { type: 'string' },
      judge: { type: 'boolean' },
      'data-dir': { type: 'string', default: './data' },
      'wait-ms': { type: 'string', default: '600000' },
      help: { type: 'boolean' },
    },
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const protocol = values.protocol as Protocol;
  if (!PROTOCOLS.includes(protocol)) {
    process.stderr.write(`demo: --protocol must be one of ${PROTOCOLS.join(', ')}, got "${values.protocol}"\n`);
    return 2;
  }
  if (values.compression !== 'gzip' && values.compression !== 'none') {
    process.stderr.write(`demo: --compression must be gzip or none, got "${values.compression}"\n`);
    return 2;
  }
  if (!CONTENT_IN.includes(values.content as ContentIn)) {
    process.stderr.write(`demo: --content must be one of ${CONTENT_IN.join(', ')}, got "${values.content}"\n`);
    return 2;
  }
  contentIn = values.content as ContentIn;
  const timeoutMs = Number(values['timeout-ms']);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
    process.stderr.write(`demo: --timeout-ms must be a positive integer, got "${values['timeout-ms']}"\n`);
    return 2;
  }
  const runs = Number(values.runs ?? (values.judge === true ? '3' : '1'));
  const waitMs = Number(values['wait-ms']);
  for (const [flag, n] of [
    ['--runs', runs],
    ['--wait-ms', waitMs],
  ] as const) {
    if (!Number.isInteger(n) || n < 1) {
      process.stderr.write(`demo: ${flag} must be a positive integer, got "${flag === '--runs' ? values.runs : values['wait-ms']}"\n`);
      return 2;
    }
  }
  const base = values.conversation ?? `demo-${randomUUID()}`;
  const conversationIds = runs === 1 ? [base] : Array.from({ length: runs }, (_, i) => `${base}-${i + 1}`);
  const conversationId = conversationIds.join(', ');

  // The exporter reports each batch's outcome; the demo keeps the last failure to say so.
  const exporter = exporterFor(protocol, values.endpoint, values.compression, timeoutMs);
  let exported = 0;
  let failure: string | undefined;
  const counting: tracing.SpanExporter = {
    export: (spans, done) =>
      exporter.export(spans, (result) => {
        if (result.code === 0) exported += spans.length;
        else failure = result.error?.message ?? 'export failed';
        done(result);
      }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
  };
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': 'trajwatch-demo-support-agent', 'service.version': '1.0.0' }),
    spanProcessors: [new tracing.BatchSpanProcessor(counting)],
    ...(contentIn === 'logs'
      ? { logRecordProcessors: [new sdkLogs.BatchLogRecordProcessor({ exporter: logExporterFor(protocol, values.endpoint, values.compression, timeoutMs) })] }
      : {}),
  });
  sdk.start();
  for (const id of conversationIds) await runAgent(id);
  // Shutdown flushes the last batch; an unreachable endpoint rejects here after the
  // exporter's retries.
  await sdk.shutdown().catch((err: unknown) => {
    failure = (err as Error).message;
  });
  context.disable();

  if (failure !== undefined || exported === 0) {
    process.stderr.write(
      `demo: could not send to ${values.endpoint} over ${protocol}: ${failure ?? 'nothing was exported'}\n` +
        `      is \`npm start\` (trajwatch serve) running there?\n`,
    );
    return 1;
  }
  if (values.judge === true) {
    process.stdout.write(`demo: sent ${exported} spans of ${runs} runs (${conversationId}) over OTLP ${protocol} to ${values.endpoint}\n`);
    return waitForJudge(values['data-dir'], conversationIds, waitMs);
  }
  process.stdout.write(
    `demo: sent ${exported} spans of conversation ${conversationId} over OTLP ${protocol} to ${values.endpoint}\n` +
      `\n` +
      `trajwatch closes the trajectory once the run has been quiet for assembler.quietPeriodMs (2 s by\n` +
      `default). Then, in serve's data directory (--data-dir, ./data by default):\n` +
      `  trajectories.jsonl  the trajectory, key "${conversationId}": 1 agent, 6 llm and 5 tool steps\n` +
      `  findings.jsonl      its findings: the failed get_order_status call, the repeated\n` +
      `                      get_order_status call, and issue_refund / send_email with no approval\n` +
      `                      step before them (unguarded-send)\n` +
      `e.g.  grep '${conversationId}' data/findings.jsonl\n`,
  );
  return 0;
}

/**
 * `--judge`: waits (bounded) for the analysis manifest of each run in serve's findings log —
 * written once the judge has answered, refused or deferred the run's windows — and prints
 * each window's fate and the judge's answers, then the walkthrough's next step.
 */
async function waitForJudge(dataDir: string, keys: readonly string[], waitMs: number): Promise<number> {
  const path = join(dataDir, 'findings.jsonl');
  process.stdout.write(`demo: waiting up to ${Math.round(waitMs / 1000)} s for the judge's answers in ${path} (a small local model takes 15-90 s a window)\n`);
  const deadline = Date.now() + waitMs;
  const manifests = new Map<string, Record<string, unknown>>();
  let findings: Record<string, unknown>[] = [];
  while (manifests.size < keys.length) {
    if (Date.now() > deadline) {
      process.stderr.write(
        `demo: no analysis manifest for ${keys.filter((k) => !manifests.has(k)).join(', ')} after ${Math.round(waitMs / 1000)} s in ${path}\n` +
          `      is serve running with that data directory and the judge on (serve --config examples/judge-local.yaml), and the model server up (npm run model)?\n`,
      );
      return 1;
    }
    await sleep(1_000);
    const records = (await readLogLines(path)).map((l) => JSON.parse(l) as Record<string, unknown>);
    const ofRuns = records.filter((r) => keys.includes(((r.subject ?? {}) as { trajectory_key?: string }).trajectory_key ?? ''));
    for (const r of ofRuns) if (r.record_kind === 'analysis-manifest') manifests.set((r.subject as { trajectory_key: string }).trajectory_key, r);
    findings = ofRuns.filter((r) => r.record_kind === undefined && r.analyst_id === 'trace-questions');
  }
  let judged = 0;
  for (const key of keys) {
    const windows = (manifests.get(key)!.windows ?? []) as { window_id: string; fate: string; reason?: string; finding_ids: string[] }[];
    process.stdout.write(`\n${key}:\n`);
    if (windows.length === 0) process.stdout.write("  no window (is the judge on in serve's configuration?)\n");
    for (const w of windows) {
      if (w.fate === 'judged') judged++;
      process.stdout.write(`  window ${w.window_id}: ${w.fate}${w.reason === undefined ? '' : ` (${w.reason})`}\n`);
      for (const f of findings.filter((x) => w.finding_ids.includes(x.finding_id as string))) process.stdout.write(`    ${recordText(JSON.stringify(f))}\n`);
    }
  }
  process.stdout.write(
    `\ndemo: the judge answered ${judged} of the runs' windows. None raises an alarm yet: an answer becomes a\n` +
      `coordinator alarm only for a question whose judge holds a certificate from your labels. Next:\n` +
      `  npm run -s trajwatch -- label --data-dir ${dataDir}       label the judged windows in a browser\n` +
      `  npm run -s trajwatch -- calibrate --data-dir ${dataDir}   the judge against your labels; a certificate or why not\n`,
  );
  return judged > 0 ? 0 : 1;
}

process.exitCode = await main();
