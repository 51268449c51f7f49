/**
 * Synthetic agent telemetry for benchmarks: small GenAI-style spans (~500 bytes of
 * protobuf, 10 attributes each) grouped in traces of an agent, llm and tool spans.
 * Deterministic for a given seed.
 */
import { mulberry32 } from '../test/helpers/mulberry32.ts';
import { encodeOtlpJsonAsProto } from '../test/fixtures/otlp/protobufjs-codec.ts';

/** The seeded PRNG every generator shares. */
const random: (seed: number) => () => number = mulberry32;

function hex(next: () => number, bytes: number): string {
  let out = '';
  for (let i = 0; i < bytes; i++)
    out += Math.floor(next() * 256)
      .toString(16)
      .padStart(2, '0');
  return out;
}

const tools = ['web_search', 'read_file', 'run_python', 'write_file', 'final_answer'];
const models = ['gpt-4.1-mini', 'claude-sonnet-4', 'qwen3-32b'];

/** OTLP/JSON `ExportTraceServiceRequest` with `spanCount` spans (one agent root per 8 spans). */
export function syntheticRequest(spanCount: number, seed: number): { resourceSpans: unknown[] } {
  const next = random(seed);
  const spans: unknown[] = [];
  let traceId = '';
  let rootSpanId = '';
  let clock = 1_760_000_000_000_000_000n + BigInt(seed) * 1_000_000_000n;
  for (let i = 0; i < spanCount; i++) {
    const spanId = hex(next, 8);
    const isRoot = i % 8 === 0;
    if (isRoot) {
      traceId = hex(next, 16);
      rootSpanId = spanId;
    }
    const isTool = !isRoot && i % 2 === 0;
    const tool = tools[Math.floor(next() * tools.length)]!;
    const model = models[Math.floor(next() * models.length)]!;
    const start = clock;
    const durationNs = BigInt(Math.floor(next() * 2_000_000_000));
    clock += durationNs / 4n + 1n;
    const operation = isRoot ? 'invoke_agent' : isTool ? 'execute_tool' : 'chat';
    const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
    const int = (key: string, value: number) => ({ key, value: { intValue: String(value) } });
    const attributes = [
      str('gen_ai.operation.name', operation),
      str('gen_ai.provider.name', 'openai'),
      str('gen_ai.request.model', model),
      str('gen_ai.conversation.id', `conv-${seed}-${Math.floor(i / 8)}`),
      str('gen_ai.agent.name', 'research-agent'),
      isTool ? str('gen_ai.tool.name', tool) : str('gen_ai.response.model', model),
      isTool ? str('gen_ai.tool.call.id', `call_${hex(next, 6)}`) : str('gen_ai.response.id', `resp_${hex(next, 6)}`),
      isTool
        ? str('gen_ai.tool.call.arguments', JSON.stringify({ query: `item ${Math.floor(next() * 1000)} of the report`, limit: 5 }))
        : int('gen_ai.usage.input_tokens', Math.floor(next() * 4000)),
      int('gen_ai.usage.output_tokens', Math.floor(next() * 800)),
      { key: 'gen_ai.request.temperature', value: { doubleValue: Math.round(next() * 100) / 100 } },
    ];
    spans.push({
      traceId,
      spanId,
      ...(isRoot ? {} : { parentSpanId: rootSpanId }),
      name: isTool ? `execute_tool ${tool}` : isRoot ? 'invoke_agent research-agent' : `chat ${model}`,
      kind: isRoot ? 1 : isTool ? 1 : 3,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + durationNs),
      attributes,
      status: next() < 0.05 ? { code: 2, message: 'tool failed' } : { code: 0 },
    });
  }
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'research-agent' } },
            { key: 'telemetry.sdk.language', value: { stringValue: 'python' } },
          ],
        },
        scopeSpans: [{ scope: { name: 'opentelemetry.instrumentation.genai', version: '0.1.0' }, spans }],
      },
    ],
  };
}

/** The request as OTLP/protobuf bytes (encoded with protobufjs from the JSON form). */
export function syntheticRequestProto(request: { resourceSpans: unknown[] }): Uint8Array {
  return encodeOtlpJsonAsProto(request);
}
