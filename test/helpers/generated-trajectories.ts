/**
 * Generated agent trajectories for output-identity tests: `count` trajectories (3,000 by
 * default) as OTLP/protobuf `ExportTraceServiceRequest` bodies, the same bytes for the same
 * seed on every run (a seeded mulberry32, never `Math.random`).
 *
 * What varies is what the checks and the trajectory log react to: the convention (GenAI,
 * OpenInference, Vercel AI, OpenLLMetry), sessions spanning two or three traces, traces split
 * over two requests, repeated tool calls, failed tools (status, exception event, error.type),
 * error text at the start of a result (and past the checks' scan window), arguments that are
 * JSON, malformed JSON or Python literals, llm steps with requested tool calls, and long values
 * (2–64 KiB of ASCII or multi-byte UTF-8, with quotes, backslashes and control characters, a
 * few with invalid UTF-8 bytes). Long values are what storing text as byte ranges touches.
 *
 * Bodies are encoded with protobufjs from the OTLP/JSON shape (as bench/synthetic-spans.ts
 * does). OTLP/JSON cannot carry invalid UTF-8, so such a value is written with an ASCII
 * placeholder of the same length and the placeholder's bytes are overwritten in the encoded
 * body: no length prefix changes.
 */
import { mulberry32 } from './mulberry32.ts';
import { Buffer } from 'node:buffer';
import { encodeOtlpJsonAsProto } from '../fixtures/otlp/protobufjs-codec.ts';

/** The generated requests in send order, and what was generated (for assertions). */
export interface GeneratedTrajectories {
  bodies: Uint8Array[];
  trajectoryCount: number;
  spanCount: number;
  /** Values of 2 KiB or more written into spans. */
  longValueCount: number;
  /** Values holding invalid UTF-8 bytes. */
  invalidUtf8Count: number;
}

export const GENERATED_TRAJECTORY_COUNT = 3_000;

const CONVENTIONS = ['genai', 'openinference', 'vercel-ai', 'openllmetry'] as const;
type Convention = (typeof CONVENTIONS)[number];

/** Event time between two trajectories: beyond the assembler's default idle timeout (30 s), so each closes before the next. */
const TRAJECTORY_GAP_MS = 60_000;
const T0_NS = 1_770_000_000_000_000_000n;

/**
 * Bytes that are not UTF-8: a lone continuation byte, an overlong `/`, a truncated 3-byte
 * sequence, an encoded surrogate, 0xff. The placeholder has the same length.
 */
const INVALID_UTF8 = Buffer.from([0x80, 0xc0, 0xaf, 0xe2, 0x82, 0xed, 0xa0, 0x80, 0xff]);
const INVALID_PLACEHOLDER = '\u0060BADUTF8\u0060';

type Rng = () => number;

/** The seeded PRNG every generator shares. */
const rng: (seed: number) => Rng = mulberry32;

const int = (next: Rng, below: number): number => Math.floor(next() * below);
const pick = <T>(next: Rng, items: readonly T[]): T => items[int(next, items.length)]!;
const chance = (next: Rng, p: number): boolean => next() < p;
function hex(next: Rng, bytes: number): string {
  let out = '';
  for (let i = 0; i < bytes; i++) out += int(next, 256).toString(16).padStart(2, '0');
  return out;
}

const WORDS = ['the', 'order', 'weather', 'report', 'agent', 'tool', 'result', 'value', 'city', 'refund', 'page', 'query', 'summary', 'line', 'data'];
const WIDE = ['é', 'ß', 'größe', '—', '中文', '日本語', 'Ελληνικά', 'русский', '🚀', '👩‍💻', '\u00a0', 'ﬁ', '\u200b'];
const AWKWARD = ['"', '\\', '\\"', '\n', '\t', '\r', '\u0000', '\u0001', '\u001f', '\u007f', '\u2028', '</script>', "'", '\\u0041'];

type LongFlavor = 'ascii' | 'wide' | 'awkward' | 'invalid';

/** Counters shared by one generation. */
interface Tally {
  long: number;
  invalid: number;
}

/** Text of about `bytes` UTF-8 bytes in the flavor asked for. */
function longText(next: Rng, bytes: number, flavor: LongFlavor, tally: Tally): string {
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    let word = pick(next, WORDS);
    if (flavor === 'wide' && chance(next, 0.3)) word = pick(next, WIDE);
    if (flavor === 'awkward' && chance(next, 0.15)) word = pick(next, AWKWARD);
    if (flavor === 'invalid' && chance(next, 0.002)) word = INVALID_PLACEHOLDER;
    parts.push(word);
    size += Buffer.byteLength(word) + 1;
  }
  // An invalid value always holds at least one bad sequence, in its middle.
  if (flavor === 'invalid') parts.splice(parts.length >> 1, 0, INVALID_PLACEHOLDER);
  tally.long++;
  if (flavor === 'invalid') tally.invalid++;
  return parts.join(' ');
}

/** Sizes from 2 KiB to 64 KiB, most of them small. */
const longSize = (next: Rng): number => 2048 + Math.floor(next() ** 4 * (62 * 1024));
function longFlavor(next: Rng): LongFlavor {
  const r = next();
  return r < 0.4 ? 'ascii' : r < 0.7 ? 'wide' : r < 0.95 ? 'awkward' : 'invalid';
}

/** A tool call in a trajectory, generated once and written in the convention's attributes. */
interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the tool span captures them. */
  argsText: string;
  /** The arguments as the requesting llm output carries them (JSON), when one requested it. */
  requestedArgs: string;
  requested: boolean;
  result?: string;
  failure?: 'status' | 'exception' | 'error.type';
  errorMessage?: string;
}

const TOOLS = ['get_weather', 'lookup_order', 'web_search', 'read_file', 'send_email', 'refund_payment', 'approve_refund', 'run_python', 'fetch_page'];

function toolCall(next: Rng, n: number, tally: Tally, repeatOf: ToolCall | undefined): ToolCall {
  if (repeatOf !== undefined) {
    // The same call again: an exact repetition when the text is identical, also when only whitespace or key order differ.
    const argsText = chance(next, 0.5) ? repeatOf.argsText : reformatJson(repeatOf.argsText);
    return { ...repeatOf, id: `call_${n}_${hex(next, 4)}`, argsText };
  }
  const name = pick(next, TOOLS);
  const argsObject: Record<string, unknown> = { city: pick(next, ['Paris', 'Rome', 'Zürich', '東京']), n: int(next, 100) };
  if (chance(next, 0.04)) Object.assign(argsObject, { body: longText(next, longSize(next), longFlavor(next), tally) });
  const requestedArgs = JSON.stringify(argsObject);
  const shape = next();
  let argsText: string;
  if (shape < 0.6) argsText = requestedArgs;
  else if (shape < 0.75) argsText = requestedArgs.slice(0, Math.max(1, requestedArgs.length - 1 - int(next, 5)));
  else if (shape < 0.9) argsText = pythonLiteral(argsObject);
  else argsText = `{"args": [], "kwargs": ${requestedArgs}}`;
  const call: ToolCall = { id: `call_${n}_${hex(next, 4)}`, name, argsText, requestedArgs, requested: chance(next, 0.7) };
  const outcome = next();
  if (outcome < 0.12) {
    call.failure = pick(next, ['status', 'exception', 'error.type'] as const);
    call.errorMessage = pick(next, ['OrderServiceUnavailable: timed out after 30s', 'connection reset by peer', "KeyError: 'city'", 'upstream 503']);
  } else if (outcome < 0.22) {
    call.result = pick(next, [
      'Error: rate limited',
      'ValueError: bad city',
      'Traceback (most recent call last):\n  File "x.py"',
      '{"error": "not found"}',
      '{"isError": true}',
    ]);
    if (chance(next, 0.3)) call.result += ` ${longText(next, longSize(next), longFlavor(next), tally)}`;
  } else if (outcome < 0.25) {
    // Error text past the scan window: not an error payload by the default patterns.
    call.result = `${longText(next, 5000, 'ascii', tally)}\nError: late`;
  } else if (outcome < 0.37) {
    call.result = longText(next, longSize(next), longFlavor(next), tally);
  } else if (outcome < 0.95) {
    call.result = JSON.stringify({ temp: int(next, 40), ok: true });
  }
  return call;
}

/** `{"a": 1}` as `{ "a" : 1 }`: the same JSON, different text. */
function reformatJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 1);
  } catch {
    return `${text} `;
  }
}

/** A Python `repr` of a flat dict (what some instrumentations capture instead of JSON). */
function pythonLiteral(value: Record<string, unknown>): string {
  const repr = (v: unknown): string => (typeof v === 'string' ? `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'` : String(v));
  return `{${Object.entries(value)
    .map(([k, v]) => `'${k}': ${repr(v)}`)
    .join(', ')}}`;
}

type Attr = { key: string; value: Record<string, unknown> };
const str = (key: string, value: string): Attr => ({ key, value: { stringValue: value } });
const num = (key: string, value: number): Attr => ({ key, value: { intValue: String(value) } });

interface SpanJson {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attr[];
  events?: { name: string; timeUnixNano: string; attributes: Attr[] }[];
  status: { code: number; message?: string };
}

/** Spans of one trace in one convention: a root, then llm turns, each followed by the tools it asked for. */
function traceSpans(next: Rng, convention: Convention, session: string | undefined, startNs: bigint, tally: Tally, ordinal: number): SpanJson[] {
  const traceId = hex(next, 16);
  const rootId = hex(next, 8);
  const spans: SpanJson[] = [];
  let clock = startNs + 1_000_000n;
  const at = (): [string, string] => {
    const start = clock;
    clock += BigInt(1 + int(next, 400)) * 1_000_000n;
    return [String(start), String(clock)];
  };
  const model = pick(next, ['gpt-4.1-mini', 'claude-sonnet-4', 'qwen3-32b']);
  const turns = 1 + int(next, 3);
  const calls: ToolCall[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const turnCalls: ToolCall[] = [];
    for (let c = int(next, 4); c > 0; c--) {
      const repeat = calls.length > 0 && chance(next, 0.25) ? pick(next, calls) : undefined;
      turnCalls.push(toolCall(next, ordinal * 100 + calls.length + turnCalls.length, tally, repeat));
    }
    calls.push(...turnCalls);
    const prompt = chance(next, 0.08) ? longText(next, longSize(next), longFlavor(next), tally) : `turn ${turn}: ${pick(next, WORDS)}?`;
    const answer = chance(next, 0.06) ? longText(next, longSize(next), longFlavor(next), tally) : `ok ${pick(next, WORDS)}`;
    const [s, e] = at();
    spans.push(
      llmSpan(
        convention,
        { traceId, spanId: hex(next, 8), parentSpanId: rootId, startTimeUnixNano: s, endTimeUnixNano: e },
        model,
        prompt,
        answer,
        turnCalls.filter((c) => c.requested),
        session,
      ),
    );
    for (const call of turnCalls) {
      const [ts, te] = at();
      spans.push(toolSpan(convention, { traceId, spanId: hex(next, 8), parentSpanId: rootId, startTimeUnixNano: ts, endTimeUnixNano: te }, call, session));
    }
  }
  const rootEnd = String(clock + 1_000_000n);
  const task = chance(next, 0.05) ? longText(next, longSize(next), longFlavor(next), tally) : `task ${ordinal}`;
  spans.push(rootSpan(convention, { traceId, spanId: rootId, startTimeUnixNano: String(startNs), endTimeUnixNano: rootEnd }, task, session));
  return spans;
}

type Identity = Pick<SpanJson, 'traceId' | 'spanId' | 'parentSpanId' | 'startTimeUnixNano' | 'endTimeUnixNano'>;

function sessionAttrs(convention: Convention, session: string | undefined): Attr[] {
  if (session === undefined) return [];
  const key = {
    genai: 'gen_ai.conversation.id',
    openinference: 'session.id',
    'vercel-ai': 'ai.telemetry.metadata.sessionId',
    openllmetry: 'traceloop.association.properties.session_id',
  }[convention];
  return [str(key, session)];
}

function rootSpan(convention: Convention, id: Identity, task: string, session: string | undefined): SpanJson {
  const attrs: Record<Convention, Attr[]> = {
    genai: [
      str('gen_ai.operation.name', 'invoke_agent'),
      str('gen_ai.agent.name', 'support'),
      str('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: task }] }])),
    ],
    openinference: [str('openinference.span.kind', 'AGENT'), str('agent.name', 'support'), str('input.value', task)],
    'vercel-ai': [str('ai.operationId', 'ai.generateText'), str('ai.telemetry.functionId', 'support'), str('ai.prompt', JSON.stringify({ prompt: task }))],
    openllmetry: [
      str('traceloop.span.kind', 'workflow'),
      str('traceloop.entity.name', 'support'),
      str('traceloop.entity.input', JSON.stringify({ args: [task], kwargs: {} })),
    ],
  };
  const name = { genai: 'invoke_agent support', openinference: 'CodeAgent.run', 'vercel-ai': 'ai.generateText', openllmetry: 'support.workflow' }[convention];
  return { ...id, name, kind: 1, attributes: [...attrs[convention], ...sessionAttrs(convention, session)], status: { code: 1 } };
}

function llmSpan(
  convention: Convention,
  id: Identity,
  model: string,
  prompt: string,
  answer: string,
  requested: ToolCall[],
  session: string | undefined,
): SpanJson {
  let attributes: Attr[];
  switch (convention) {
    case 'genai':
      attributes = [
        str('gen_ai.operation.name', 'chat'),
        str('gen_ai.request.model', model),
        str('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt }] }])),
        str(
          'gen_ai.output.messages',
          JSON.stringify([
            {
              role: 'assistant',
              parts: [
                { type: 'text', content: answer },
                ...requested.map((c) => ({ type: 'tool_call', id: c.id, name: c.name, arguments: JSON.parse(c.requestedArgs) as unknown })),
              ],
            },
          ]),
        ),
        num('gen_ai.usage.input_tokens', prompt.length >> 2),
      ];
      break;
    case 'openinference':
      attributes = [
        str('openinference.span.kind', 'LLM'),
        str('llm.model_name', model),
        str('input.value', prompt),
        str('output.value', answer),
        str('llm.input_messages.0.message.role', 'user'),
        str('llm.input_messages.0.message.content', prompt),
        str('llm.output_messages.0.message.role', 'assistant'),
        ...requested.flatMap((c, k) => [
          str(`llm.output_messages.0.message.tool_calls.${k}.tool_call.id`, c.id),
          str(`llm.output_messages.0.message.tool_calls.${k}.tool_call.function.name`, c.name),
          str(`llm.output_messages.0.message.tool_calls.${k}.tool_call.function.arguments`, c.requestedArgs),
        ]),
      ];
      break;
    case 'vercel-ai':
      attributes = [
        str('ai.operationId', 'ai.generateText.doGenerate'),
        str('ai.model.id', model),
        str('ai.prompt.messages', JSON.stringify([{ role: 'user', content: prompt }])),
        str('ai.response.text', answer),
        ...(requested.length === 0
          ? []
          : [
              str(
                'ai.response.toolCalls',
                JSON.stringify(requested.map((c) => ({ toolCallType: 'function', toolCallId: c.id, toolName: c.name, args: c.requestedArgs }))),
              ),
            ]),
      ];
      break;
    case 'openllmetry':
      attributes = [
        str('llm.request.type', 'chat'),
        str('gen_ai.system', 'OpenAI'),
        str('gen_ai.request.model', model),
        str('gen_ai.prompt.0.role', 'user'),
        str('gen_ai.prompt.0.content', prompt),
        str('gen_ai.completion.0.content', answer),
        ...requested.flatMap((c, k) => [
          str(`gen_ai.completion.0.tool_calls.${k}.id`, c.id),
          str(`gen_ai.completion.0.tool_calls.${k}.name`, c.name),
          str(`gen_ai.completion.0.tool_calls.${k}.arguments`, c.requestedArgs),
        ]),
      ];
      break;
  }
  const name = { genai: `chat ${model}`, openinference: 'LiteLLMModel.__call__', 'vercel-ai': 'ai.generateText.doGenerate', openllmetry: 'openai.chat' }[
    convention
  ];
  return { ...id, name, kind: 3, attributes: [...attributes, ...sessionAttrs(convention, session)], status: { code: 0 } };
}

function toolSpan(convention: Convention, id: Identity, call: ToolCall, session: string | undefined): SpanJson {
  let attributes: Attr[];
  switch (convention) {
    case 'genai':
      attributes = [
        str('gen_ai.operation.name', 'execute_tool'),
        str('gen_ai.tool.name', call.name),
        str('gen_ai.tool.call.id', call.id),
        str('gen_ai.tool.call.arguments', call.argsText),
        ...(call.result === undefined ? [] : [str('gen_ai.tool.call.result', call.result)]),
      ];
      break;
    case 'openinference':
      attributes = [
        str('openinference.span.kind', 'TOOL'),
        str('tool.name', call.name),
        str('input.value', call.argsText),
        ...(call.argsText.startsWith('{"') ? [str('input.mime_type', 'application/json')] : []),
        ...(call.result === undefined ? [] : [str('output.value', call.result)]),
      ];
      break;
    case 'vercel-ai':
      attributes = [
        str('ai.operationId', 'ai.toolCall'),
        str('ai.toolCall.name', call.name),
        str('ai.toolCall.id', call.id),
        str('ai.toolCall.args', call.argsText),
        ...(call.result === undefined ? [] : [str('ai.toolCall.result', call.result)]),
      ];
      break;
    case 'openllmetry':
      attributes = [
        str('traceloop.span.kind', 'tool'),
        str('traceloop.entity.name', call.name),
        str('traceloop.entity.input', call.argsText),
        ...(call.result === undefined ? [] : [str('traceloop.entity.output', call.result)]),
      ];
      break;
  }
  if (call.failure === 'error.type') attributes.push(str('error.type', 'tool_error'));
  const events =
    call.failure === 'exception'
      ? [
          {
            name: 'exception',
            timeUnixNano: id.endTimeUnixNano,
            attributes: [str('exception.type', 'ToolError'), str('exception.message', call.errorMessage ?? '')],
          },
        ]
      : undefined;
  const failed = call.failure !== undefined;
  const name = { genai: `execute_tool ${call.name}`, openinference: call.name, 'vercel-ai': 'ai.toolCall', openllmetry: `${call.name}.tool` }[convention];
  return {
    ...id,
    name,
    kind: 1,
    attributes: [...attributes, ...sessionAttrs(convention, session)],
    ...(events === undefined ? {} : { events }),
    status: failed ? { code: 2, message: call.errorMessage ?? 'failed' } : { code: 1 },
  };
}

function encode(spans: SpanJson[], service: string): Uint8Array {
  const body = encodeOtlpJsonAsProto({
    resourceSpans: [
      { resource: { attributes: [str('service.name', service)] }, scopeSpans: [{ scope: { name: 'trajwatch-generated', version: '1' }, spans }] },
    ],
  });
  return withInvalidUtf8(body);
}

/** Overwrites each placeholder's bytes with the invalid sequence of the same length. */
function withInvalidUtf8(body: Uint8Array): Uint8Array {
  const bytes = Buffer.from(body);
  const marker = Buffer.from(INVALID_PLACEHOLDER);
  for (let at = bytes.indexOf(marker); at !== -1; at = bytes.indexOf(marker, at + marker.length)) INVALID_UTF8.copy(bytes, at);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/**
 * `count` trajectories, each its own seed (`seed + i`), so a change in one leaves the others'
 * bytes alone. Every fifth trajectory is a session of two or three traces; every seventh trace
 * is sent in two requests (children first, then the rest with the root), as batch exporters do.
 */
export function generatedTrajectories(count = GENERATED_TRAJECTORY_COUNT, seed = 0x7a11): GeneratedTrajectories {
  const bodies: Uint8Array[] = [];
  const tally: Tally = { long: 0, invalid: 0 };
  let spanCount = 0;
  for (let i = 0; i < count; i++) {
    const next = rng(seed + i);
    const convention = CONVENTIONS[i % CONVENTIONS.length]!;
    const traces = i % 5 === 0 ? 2 + int(next, 2) : 1;
    const session = traces > 1 || chance(next, 0.5) ? `gen-session-${i}-${hex(next, 4)}` : undefined;
    let startNs = T0_NS + BigInt(i) * BigInt(TRAJECTORY_GAP_MS) * 1_000_000n;
    for (let t = 0; t < traces; t++) {
      const spans = traceSpans(next, convention, session, startNs, tally, i * 4 + t);
      spanCount += spans.length;
      const service = `gen-${convention}`;
      if ((i + t) % 7 === 3 && spans.length > 2) {
        const cut = 1 + int(next, spans.length - 2);
        bodies.push(encode(spans.slice(0, cut), service), encode(spans.slice(cut), service));
      } else {
        bodies.push(encode(spans, service));
      }
      // The next trace of the session starts shortly after this one's root ended (within the quiet period).
      startNs = BigInt(spans.at(-1)!.endTimeUnixNano) + 300_000_000n;
    }
  }
  return { bodies, trajectoryCount: count, spanCount, longValueCount: tally.long, invalidUtf8Count: tally.invalid };
}
