import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the LLM endpoint every framework in the matrix would call (a hosted API,
 * vLLM, Ollama), which cannot run here. It is a real HTTP server on a free loopback port
 * speaking the OpenAI Chat Completions API (`POST …/chat/completions`, plain JSON and
 * `stream: true` server-sent events with tool-call deltas) and the Responses API
 * (`POST …/responses`, non-streaming and streaming), so each framework's own client, agent
 * loop, instrumentation and exporter run unchanged in front of it.
 *
 * It is stateless: the reply follows from the request alone. The conversation is read from
 * the latest message that carries one of the two scripted user prompts; what came after it
 * decides the next move (see {@link nextMove}):
 *
 * - turn 1 ({@link TURN_1}): `get_weather {"city":"Paris"}`, again the same call,
 *   `lookup_order {"order_id":"42"}`, then {@link FINAL_1} (which does not quote the tool's
 *   error text);
 * - turn 2 ({@link TURN_2}): `get_weather {"city":"Rome"}`, then {@link FINAL_2}.
 *
 * When the request offers a `final_answer` tool (smolagents' tool-calling agent ends a run
 * only through it), the final text is a call to that tool, as a real model would answer.
 */
export const TURN_1 = "What's the weather in Paris? Check it twice to be sure, then look up order 42.";
export const TURN_2 = 'And in Rome?';
export const FINAL_1 = 'It is sunny in Paris. I could not look up order 42 right now.';
export const FINAL_2 = 'It is sunny in Rome too.';
/** What every scenario's `get_weather` returns, whatever the city. */
export const WEATHER_TEXT = 'Sunny, 22 degrees Celsius';
/** What every scenario's `lookup_order` raises: an exception type and its message. */
export const ORDER_ERROR_TYPE = 'OrderServiceUnavailable';
export const ORDER_ERROR_MESSAGE = 'order service timed out after 30s';

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as the APIs carry it. */
  arguments: string;
}

export type Move = { kind: 'tool'; call: ToolCall } | { kind: 'text'; text: string };

/** One conversation entry, reduced to what the decision reads. */
export interface Entry {
  role: string;
  text: string;
  /** Tool calls an assistant entry made. */
  toolCalls: number;
}

const TURN_1_PLAN: Move[] = [
  { kind: 'tool', call: { id: 'call_paris_1', name: 'get_weather', arguments: '{"city":"Paris"}' } },
  { kind: 'tool', call: { id: 'call_paris_2', name: 'get_weather', arguments: '{"city":"Paris"}' } },
  { kind: 'tool', call: { id: 'call_order_42', name: 'lookup_order', arguments: '{"order_id":"42"}' } },
  { kind: 'text', text: FINAL_1 },
];
const TURN_2_PLAN: Move[] = [
  { kind: 'tool', call: { id: 'call_rome_1', name: 'get_weather', arguments: '{"city":"Rome"}' } },
  { kind: 'text', text: FINAL_2 },
];

/**
 * The next move for a conversation. Progress within a turn is the number of tool results
 * after the turn's prompt, counted two ways and the larger taken: entries that are neither
 * the assistant's nor the system's (`tool` messages, and the `user` observation messages of
 * frameworks that report results as user text), and occurrences of the tools' own texts
 * ({@link WEATHER_TEXT}, {@link ORDER_ERROR_MESSAGE}) in them — smolagents folds a failed
 * call's error into the previous observation message. Anything past the plan repeats the
 * final text.
 */
export function nextMove(entries: Entry[]): Move {
  let at = -1;
  let plan = TURN_1_PLAN;
  entries.forEach((e, i) => {
    if (e.role === 'assistant' || e.role === 'system') return;
    if (e.text.includes(TURN_2)) {
      at = i;
      plan = TURN_2_PLAN;
    } else if (e.text.includes(TURN_1)) {
      at = i;
      plan = TURN_1_PLAN;
    }
  });
  if (at === -1) return { kind: 'text', text: 'I can only help with the weather and orders.' };
  const observations = entries.slice(at + 1).filter((e) => e.role !== 'assistant' && e.role !== 'system' && e.role !== 'developer');
  const mentions = observations.reduce((n, e) => n + occurrences(e.text, WEATHER_TEXT) + occurrences(e.text, ORDER_ERROR_MESSAGE), 0);
  const results = Math.max(observations.length, mentions);
  return plan[Math.min(results, plan.length - 1)]!;
}

function occurrences(text: string, what: string): number {
  return text.split(what).length - 1;
}

/** Chat Completions `messages` → entries. Content may be a string or an array of parts. */
export function chatEntries(messages: unknown): Entry[] {
  if (!Array.isArray(messages)) return [];
  return messages.map((m: Record<string, unknown>) => ({
    role: String(m.role ?? ''),
    text: contentText(m.content),
    toolCalls: Array.isArray(m.tool_calls) ? m.tool_calls.length : 0,
  }));
}

/** Responses API `input` (a string or a list of items) → entries. */
export function responsesEntries(input: unknown): Entry[] {
  if (typeof input === 'string') return [{ role: 'user', text: input, toolCalls: 0 }];
  if (!Array.isArray(input)) return [];
  return input.map((item: Record<string, unknown>) => {
    if (item.type === 'function_call') return { role: 'assistant', text: '', toolCalls: 1 };
    if (item.type === 'function_call_output') return { role: 'tool', text: contentText(item.output), toolCalls: 0 };
    return { role: String(item.role ?? 'user'), text: contentText(item.content), toolCalls: 0 };
  });
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p: unknown) => (typeof p === 'string' ? p : typeof p === 'object' && p !== null && 'text' in p ? String((p as { text: unknown }).text) : ''))
      .join('\n');
  }
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

function offersTool(tools: unknown, name: string): boolean {
  if (!Array.isArray(tools)) return false;
  return tools.some((t: Record<string, unknown>) => t.name === name || (t.function as Record<string, unknown> | undefined)?.name === name);
}

/** A text move turned into a `final_answer` call when the request offers that tool. */
function asOffered(move: Move, tools: unknown): Move {
  if (move.kind === 'text' && offersTool(tools, 'final_answer')) {
    return { kind: 'tool', call: { id: 'call_final_answer', name: 'final_answer', arguments: JSON.stringify({ answer: move.text }) } };
  }
  return move;
}

export interface StandInModel {
  /** Base URL ending in `/v1`, what OpenAI clients take as `base_url`. */
  baseUrl: string;
  /** Every request received: path and parsed body, in order. */
  requests: { path: string; body: Record<string, unknown> }[];
  close(): Promise<void>;
}

const USAGE = { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 };

export async function startStandInModel(): Promise<StandInModel> {
  const requests: StandInModel['requests'] = [];
  let served = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      if (req.method === 'GET' && path.endsWith('/models')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'list', data: [{ id: 'stand-in-model', object: 'model', created: 0, owned_by: 'trajwatch-tests' }] }));
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"body is not JSON"}}');
        return;
      }
      requests.push({ path, body });
      served += 1;
      const model = typeof body.model === 'string' ? body.model : 'stand-in-model';
      if (req.method === 'POST' && path.endsWith('/chat/completions')) {
        const move = asOffered(nextMove(chatEntries(body.messages)), body.tools);
        if (body.stream === true) streamChat(res, move, model, served, body);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(chatCompletion(move, model, served)));
        return;
      }
      if (req.method === 'POST' && path.endsWith('/responses')) {
        const move = asOffered(nextMove(responsesEntries(body.input)), body.tools);
        const response = responsesObject(move, model, served);
        if (body.stream === true) streamResponses(res, response);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function chatCompletion(move: Move, model: string, n: number) {
  const message =
    move.kind === 'tool'
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: move.call.id, type: 'function', function: { name: move.call.name, arguments: move.call.arguments } }],
        }
      : { role: 'assistant', content: move.text };
  return {
    id: `chatcmpl-standin-${n}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: move.kind === 'tool' ? 'tool_calls' : 'stop' }],
    usage: USAGE,
  };
}

function streamChat(res: ServerResponse, move: Move, model: string, n: number, body: Record<string, unknown>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const base = { id: `chatcmpl-standin-${n}`, object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const send = (delta: Record<string, unknown>, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`);
  if (move.kind === 'tool') {
    send({ role: 'assistant', content: null });
    send({ tool_calls: [{ index: 0, id: move.call.id, type: 'function', function: { name: move.call.name, arguments: '' } }] });
    // Arguments arrive in pieces, as real endpoints send them.
    const args = move.call.arguments;
    const cut = Math.ceil(args.length / 2);
    for (const piece of [args.slice(0, cut), args.slice(cut)]) send({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
    send({}, 'tool_calls');
  } else {
    send({ role: 'assistant', content: '' });
    for (const word of move.text.split(/(?<= )/)) send({ content: word });
    send({}, 'stop');
  }
  const options = body.stream_options as Record<string, unknown> | undefined;
  if (options?.include_usage === true) res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: USAGE })}\n\n`);
  res.end('data: [DONE]\n\n');
}

function responsesObject(move: Move, model: string, n: number) {
  const item =
    move.kind === 'tool'
      ? { type: 'function_call', id: `fc_standin_${n}`, call_id: move.call.id, name: move.call.name, arguments: move.call.arguments, status: 'completed' }
      : {
          type: 'message',
          id: `msg_standin_${n}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: move.text, annotations: [] }],
        };
  return {
    id: `resp_standin_${n}`,
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    model,
    output: [item],
    parallel_tool_calls: false,
    tool_choice: 'auto',
    tools: [],
    usage: {
      input_tokens: 50,
      output_tokens: 10,
      total_tokens: 60,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    },
  };
}

function streamResponses(res: ServerResponse, response: ReturnType<typeof responsesObject>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const item = response.output[0]!;
  send('response.created', { response: { ...response, status: 'in_progress', output: [] } });
  send('response.output_item.added', {
    output_index: 0,
    item: item.type === 'message' ? { ...item, status: 'in_progress', content: [] } : { ...item, status: 'in_progress', arguments: '' },
  });
  if (item.type === 'function_call') {
    send('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: item.arguments });
    send('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: item.arguments });
  } else {
    const text = (item.content as { text: string }[])[0]!.text;
    send('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    send('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text });
    send('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text });
    send('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
  }
  send('response.output_item.done', { output_index: 0, item });
  send('response.completed', { response });
  res.end();
}
