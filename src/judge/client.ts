import { z } from 'zod';
import { Backoff } from '../storage/backoff.ts';
import { ANSWER_FORMATS, type AnswerFormat } from './answer-format.ts';
import { formatRefusal, requestedFormat } from './format-refusal.ts';
import type { TokenLogprob } from './parse-answers.ts';
import { receiptOf, unknownUsage, type AttemptReceipt, type Receipt } from './receipts.ts';

/** An OpenAI-compatible Chat Completions endpoint (vLLM, Ollama, llama.cpp server, hosted APIs). */
export const JudgeClientSchema = z
  .strictObject({
    /** Up to and including `/v1`; `/chat/completions` is appended. */
    baseUrl: z.url().default('http://127.0.0.1:8000/v1'),
    /** The model requested; required when the judge is enabled. */
    model: z.string().default(''),
    /** Name of the environment variable holding the API key; null sends no Authorization header. */
    apiKeyEnv: z.string().min(1).nullable().default('TRAJWATCH_JUDGE_API_KEY'),
    timeoutMs: z.int().min(1).max(600_000).default(30_000),
    /** Retries after the first attempt, for network errors, timeouts, 408, 429 and 5xx. */
    retries: z.int().min(0).max(10).default(2),
    /** First backoff ceiling; doubles each retry, each wait drawn below it (full jitter). A `Retry-After` header is honoured up to 60 s. */
    backoffMs: z.int().min(0).max(60_000).default(500),
    maxOutputTokens: z.int().min(16).max(8192).default(256),
    /**
     * The model's context in tokens; a window whose request cannot fit it is refused
     * (`context-tokens`, request-fit.ts), never truncated. null = not known, not checked.
     */
    contextTokens: z.int().min(256).nullable().default(null),
    /** Ask for logprobs; without them no answer can act. */
    logprobs: z.boolean().default(true),
    topLogprobs: z.int().min(1).max(20).default(5),
    /**
     * How the reply is shaped (answer-format.ts): `json_schema` (OpenAI, vLLM, llama.cpp's
     * server, Ollama, LM Studio), `json_object` (llama-cpp-python's server), `grammar` (GBNF
     * only) or `lines` (servers with no structured output). Part of the evaluator identity and
     * the request contract: a change retires certificates. The default is structured output,
     * chosen by measurement (docs/benchmarks.md: a small local model answers 100 % in protocol
     * with it, 0 % with lines); a server that refuses it fails the call naming this key and
     * the alternatives (format-refusal.ts), never a stream of bad answers.
     */
    answerFormat: z.enum(ANSWER_FORMATS).default('json_schema'),
    /** Prices to turn usage into cost; null = cost unknown. */
    pricing: z
      .strictObject({
        inputPerMillionTokens: z.number().min(0),
        outputPerMillionTokens: z.number().min(0),
        currency: z.string().min(1).default('USD'),
      })
      .nullable()
      .default(null),
  })
  .prefault({});

export type JudgeClientConfig = z.infer<typeof JudgeClientSchema>;

export type { AttemptReceipt, Receipt } from './receipts.ts';

export type FailureKind = 'timeout' | 'cancelled' | 'network' | 'http' | 'bad-response';

export type ChatOutcome =
  | { ok: true; content: string; logprobs: TokenLogprob[] | null; servedModel: string | null; receipt: Receipt }
  | {
      ok: false;
      failure: { kind: FailureKind; status?: number; message: string };
      receipt: Receipt;
      /** Set when the server refused the structured format asked for (format-refusal.ts): a configuration fault. */
      refusedFormat?: AnswerFormat;
    };

export interface ChatClientOptions {
  fetch?: typeof fetch;
  env?: Readonly<Record<string, string | undefined>>;
}

const RETRIABLE_STATUS = new Set([408, 409, 429, 500, 502, 503, 504]);

/** Chat Completions over HTTP. `complete` never throws: every failure comes back as a value. */
export class ChatClient {
  readonly #cfg: JudgeClientConfig;
  readonly #fetch: typeof fetch;
  readonly #apiKey: string | undefined;

  constructor(cfg: JudgeClientConfig, options: ChatClientOptions = {}) {
    this.#cfg = cfg;
    this.#fetch = options.fetch ?? fetch;
    const env = options.env ?? process.env;
    this.#apiKey = cfg.apiKeyEnv === null ? undefined : env[cfg.apiKeyEnv];
  }

  /**
   * One invocation: the first attempt and its retries. Every physical attempt gets its own
   * entry in the receipt; an attempt that got no usage report (timeout, network error, an error
   * status, cancellation after sending) has unknown usage, since the provider may have billed it.
   * An error answer that refuses the structured format asked for is not retried (`refusedFormat`).
   */
  async complete(body: Record<string, unknown>, signal?: AbortSignal): Promise<ChatOutcome> {
    const attempts: AttemptReceipt[] = [];
    const fail = (failure: { kind: FailureKind; status?: number; message: string }): ChatOutcome => ({ ok: false, failure, receipt: receiptOf(attempts) });
    const url = `${this.#cfg.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    const text = JSON.stringify(body);
    let last: { kind: FailureKind; status?: number; message: string } = { kind: 'network', message: 'not attempted' };
    // The house backoff (full jitter), its ceiling doubling from backoffMs once per retry; a Retry-After overrides a wait.
    const backoff = new Backoff(this.#cfg.backoffMs, this.#cfg.backoffMs * 2 ** this.#cfg.retries);
    for (let attempt = 0; attempt <= this.#cfg.retries; attempt++) {
      if (isAborted(signal)) return fail({ kind: 'cancelled', message: 'cancelled' });
      const timeout = AbortSignal.timeout(this.#cfg.timeoutMs);
      const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
      let retryAfterMs: number | undefined;
      let status: number | null = null;
      try {
        const res = await this.#fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(this.#apiKey === undefined ? {} : { authorization: `Bearer ${this.#apiKey}` }),
          },
          body: text,
          signal: combined,
        });
        status = res.status;
        const payload = await res.text();
        if (res.ok) {
          const read = this.#read(payload, status);
          attempts.push(read.attempt);
          return 'failure' in read ? fail(read.failure) : { ...read.answer, receipt: receiptOf(attempts) };
        }
        attempts.push(this.#usageOf(payload, 'http', status));
        const format = requestedFormat(body);
        const refused = formatRefusal(format, res.status, payload);
        if (refused !== null)
          return { ok: false, failure: { kind: 'http', status: res.status, message: refused }, receipt: receiptOf(attempts), refusedFormat: format };
        last = { kind: 'http', status: res.status, message: `HTTP ${res.status}: ${payload.slice(0, 200)}` };
        if (!RETRIABLE_STATUS.has(res.status)) break;
        const after = Number(res.headers.get('retry-after'));
        if (Number.isFinite(after) && after > 0) retryAfterMs = Math.min(after * 1000, 60_000);
      } catch (err) {
        if (isAborted(signal)) {
          attempts.push(unknownUsage('cancelled', status));
          return fail({ kind: 'cancelled', message: 'cancelled' });
        }
        last = timeout.aborted
          ? { kind: 'timeout', message: `no answer within ${this.#cfg.timeoutMs} ms` }
          : { kind: 'network', message: (err as Error).message };
        attempts.push(unknownUsage(last.kind as 'timeout' | 'network', status));
      }
      if (attempt < this.#cfg.retries) {
        const waitMs = backoff.next();
        const slept = await sleep(retryAfterMs ?? waitMs, signal);
        if (!slept) return fail({ kind: 'cancelled', message: 'cancelled' });
      }
    }
    return fail(last);
  }

  /** An attempt's usage from a response body that may carry a `usage` object (some error bodies do). */
  #usageOf(payload: string, outcome: AttemptReceipt['outcome'], status: number): AttemptReceipt {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return unknownUsage(outcome, status);
    }
    const usage = UsageBodySchema.safeParse(json);
    return this.#priced(outcome, status, usage.success ? (usage.data.usage ?? null) : null);
  }

  #priced(outcome: AttemptReceipt['outcome'], status: number, usage: z.infer<typeof UsageSchema> | null): AttemptReceipt {
    const a = unknownUsage(outcome, status);
    a.promptTokens = usage?.prompt_tokens ?? null;
    a.completionTokens = usage?.completion_tokens ?? null;
    a.totalTokens = usage?.total_tokens ?? (a.promptTokens !== null && a.completionTokens !== null ? a.promptTokens + a.completionTokens : null);
    const price = this.#cfg.pricing;
    if (price !== null && a.promptTokens !== null && a.completionTokens !== null) {
      a.cost = (a.promptTokens * price.inputPerMillionTokens + a.completionTokens * price.outputPerMillionTokens) / 1e6;
      a.currency = price.currency;
    }
    return a;
  }

  #read(
    payload: string,
    status: number,
  ):
    | { attempt: AttemptReceipt; failure: { kind: FailureKind; message: string } }
    | { attempt: AttemptReceipt; answer: { ok: true; content: string; logprobs: TokenLogprob[] | null; servedModel: string | null } } {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return { attempt: unknownUsage('bad-response', status), failure: { kind: 'bad-response', message: 'response is not JSON' } };
    }
    const r = ResponseSchema.safeParse(json);
    if (!r.success)
      return { attempt: this.#usageOf(payload, 'bad-response', status), failure: { kind: 'bad-response', message: 'response is not a chat completion' } };
    const answered = this.#priced('answered', status, r.data.usage ?? null);
    const bad = (message: string) => ({ attempt: { ...answered, outcome: 'bad-response' as const }, failure: { kind: 'bad-response' as const, message } });
    const served = r.data.model;
    if (served !== undefined && served !== served.trim()) return bad('served model name has surrounding whitespace');
    const choice = r.data.choices[0];
    if (choice === undefined || typeof choice.message?.content !== 'string') return bad('no message content');
    return {
      attempt: answered,
      answer: {
        ok: true,
        content: choice.message.content,
        logprobs: choice.logprobs?.content ?? null,
        servedModel: served === undefined || served === '' ? null : served,
      },
    };
  }
}

const count = z.int().min(0);
const UsageSchema = z.object({ prompt_tokens: count.optional(), completion_tokens: count.optional(), total_tokens: count.optional() });
const ResponseSchema = z.object({
  model: z.string().optional(),
  choices: z.array(
    z.object({
      message: z.object({ content: z.string().nullable().optional() }).optional(),
      logprobs: z
        .object({
          content: z
            .array(
              z.object({
                token: z.string(),
                logprob: z.number(),
                top_logprobs: z.array(z.object({ token: z.string(), logprob: z.number() })).optional(),
              }),
            )
            .nullable()
            .optional(),
        })
        .nullable()
        .optional(),
    }),
  ),
  usage: UsageSchema.nullable().optional(),
});

/** Any body that may say what an attempt used (error bodies of some providers do). */
const UsageBodySchema = z.object({ usage: UsageSchema.nullable().optional() });

/** Read through a call so TypeScript does not narrow it across awaits. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** Resolves true after `ms`, or false at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
