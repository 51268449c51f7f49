import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerKey } from '../../src/judge/answer-format.ts';
import { requestedFormat } from '../../src/judge/format-refusal.ts';

/**
 * An in-process HTTP server speaking the OpenAI Chat Completions API with scripted answers.
 * It stands in for a real LLM endpoint (vLLM, Ollama, a hosted API), which cannot run here;
 * the client under test talks real HTTP to it. A scripted `completion(...)` is written in the
 * shape the request asks for, as a server that constrains decoding would: the eight lines when
 * the request asks for none, the battery's JSON object under `response_format` or `grammar`.
 */
export interface ScriptedReply {
  status?: number;
  /** A JSON body, or raw text when a string. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Never answer (the client must time out or be cancelled). */
  hang?: boolean;
}

export interface ScriptedServer {
  baseUrl: string;
  /** Raw request bodies received, in order. */
  requests: string[];
  /** Authorization headers received. */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

export async function startScriptedServer(script: (body: Record<string, unknown>, n: number) => ScriptedReply): Promise<ScriptedServer> {
  const requests: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      requests.push(text);
      authorizations.push(req.headers.authorization);
      if (req.url !== '/v1/chat/completions' || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      const reply = script(JSON.parse(text) as Record<string, unknown>, requests.length);
      if (reply.hang === true) {
        hanging.add(res);
        return;
      }
      const request = JSON.parse(text) as Record<string, unknown>;
      const scripted = typeof reply.body === 'object' && reply.body !== null ? SCRIPTED.get(reply.body) : undefined;
      const shaped = scripted !== undefined && requestedFormat(request) !== 'lines' ? structuredCompletion(scripted.answers, scripted.opts) : reply.body;
      const body = typeof shaped === 'string' ? shaped : JSON.stringify(shaped ?? {});
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface ScriptedAnswer {
  /** Option letter: A yes, B no, C unsure, D unavailable. */
  letter: string;
  support: string;
  /** Probability of the chosen letter; the rest goes to `runnerUp`. Omit for no logprobs. */
  p?: number;
  runnerUp?: string;
}

type CompletionOptions = { model?: string | null; usage?: unknown; logprobs?: boolean };
type Token = { token: string; logprob: number; top_logprobs: { token: string; logprob: number }[] };

/** Scripted completions by identity, so the server can write them in the shape a request asks for. */
const SCRIPTED = new WeakMap<object, { answers: readonly ScriptedAnswer[]; opts: CompletionOptions }>();

/** The token that writes an answer's letter, its alternatives from `p` and `runnerUp`. */
function letterToken(a: ScriptedAnswer): Token {
  const p = a.p ?? 1;
  const top = [{ token: a.letter, logprob: Math.log(p) }];
  if (p < 1) top.push({ token: a.runnerUp ?? (a.letter === 'A' ? 'B' : 'A'), logprob: Math.log(1 - p) });
  return { token: a.letter, logprob: Math.log(p), top_logprobs: top };
}

/** A chat completion whose content is one line per answer, with per-token logprobs when given. */
export function completion(answers: readonly ScriptedAnswer[], opts: CompletionOptions = {}): unknown {
  const tokens: Token[] = [];
  const push = (token: string, top: { token: string; logprob: number }[] = []) => tokens.push({ token, logprob: 0, top_logprobs: top });
  answers.forEach((a, i) => {
    push(String(i + 1));
    push(':');
    push(' ');
    tokens.push(letterToken(a));
    push(' |');
    push(` ${a.support}`);
    if (i < answers.length - 1) push('\n');
  });
  const out = chatCompletion(tokens, opts);
  SCRIPTED.set(out, { answers, opts });
  return out;
}

/** The same answers as the structured reply (`{"q1":{"option":"B","support":"e1"},…}`), the letter a token of its own. */
export function structuredCompletion(answers: readonly ScriptedAnswer[], opts: CompletionOptions = {}): object {
  const tokens: Token[] = [];
  const push = (token: string) => tokens.push({ token, logprob: 0, top_logprobs: [{ token, logprob: 0 }] });
  push('{');
  answers.forEach((a, i) => {
    push(`${i === 0 ? '' : ','}${JSON.stringify(answerKey(i))}:{"option":"`);
    tokens.push(letterToken(a));
    push(`","support":${JSON.stringify(a.support)}}`);
  });
  push('}');
  return chatCompletion(tokens, opts);
}

function chatCompletion(tokens: Token[], opts: CompletionOptions): object {
  const content = tokens.map((t) => t.token).join('');
  return {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    ...(opts.model === null ? {} : { model: opts.model ?? 'judge-model-2025-01' }),
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content },
        ...(opts.logprobs === false ? {} : { logprobs: { content: tokens } }),
        finish_reason: 'stop',
      },
    ],
    ...(opts.usage === undefined
      ? { usage: { prompt_tokens: 900, completion_tokens: 60, total_tokens: 960 } }
      : opts.usage === null
        ? {}
        : { usage: opts.usage }),
  };
}

/** Eight answers: all "no" (B) supported by `unresolved`, except the overrides by question index. */
export function answers(overrides: Record<number, Partial<ScriptedAnswer>> = {}, p = 0.97): ScriptedAnswer[] {
  return Array.from({ length: 8 }, (_, i) => ({ letter: 'B', support: 'unresolved', p, ...overrides[i] }));
}
