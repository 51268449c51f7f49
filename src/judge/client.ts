import { z } from 'zod';
import type { TokenLogprob } from './parse-answers.ts';

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
    /** First backoff; doubles each retry. A `Retry-After` header is honoured up to 60 s. */
    backoffMs: z.int().min(0).max(60_000).default(500),
    maxOutputTokens: z.int().min(16).max(8192).default(256),
    /** Ask for logprobs; without them no answer can act. */
    logprobs: z.boolean().default(true),
    topLogprobs: z.int().min(1).max(20).default(5),
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

/** What a call cost. Null = the provider did not say; never read as zero. */
export interface Receipt {
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
  cost: number | null;
  currency: string | null;
  /** HTTP attempts made, retries included. */
  attempts: number;
}

export type FailureKind = 'timeout' | 'cancelled' | 'network' | 'http' | 'bad-response';

export type ChatOutcome =
  | { ok: true; content: string; logprobs: TokenLogprob[] | null; servedModel: string | null; receipt: Receipt }
  | { ok: false; failure: { kind: FailureKind; status?: number; message: string }; receipt: Receipt };

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

  async complete(body: Record<string, unknown>, signal?: AbortSignal): Promise<ChatOutcome> {
    const receipt: Receipt = { promptTokens: null, completionTokens: null, totalTokens: null, cost: null, currency: null, attempts: 0 };
    const url = `${this.#cfg.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    const text = JSON.stringify(body);
    let last: { kind: FailureKind; status?: number; message: string } = { kind: 'network', message: 'not attempted' };
    for (let attempt = 0; attempt <= this.#cfg.retries; attempt++) {
      if (isAborted(signal)) return { ok: false, failure: { kind: 'cancelled', message: 'cancelled' }, receipt };
      receipt.attempts++;
      const timeout = AbortSignal.timeout(this.#cfg.timeoutMs);
      const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
      let retryAfterMs: number | undefined;
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
        const payload = await res.text();
        if (res.ok) return this.#read(payload, receipt);
        last = { kind: 'http', status: res.status, message: `HTTP ${res.status}: ${payload.slice(0, 200)}` };
        if (!RETRIABLE_STATUS.has(res.status)) break;
        const after = Number(res.headers.get('retry-after'));
        if (Number.isFinite(after) && after > 0) retryAfterMs = Math.min(after * 1000, 60_000);
      } catch (err) {
        if (isAborted(signal)) return { ok: false, failure: { kind: 'cancelled', message: 'cancelled' }, receipt };
        last = timeout.aborted
          ? { kind: 'timeout', message: `no answer within ${this.#cfg.timeoutMs} ms` }
          : { kind: 'network', message: (err as Error).message };
      }
      if (attempt < this.#cfg.retries) {
        const slept = await sleep(retryAfterMs ?? this.#cfg.backoffMs * 2 ** attempt, signal);
        if (!slept) return { ok: false, failure: { kind: 'cancelled', message: 'cancelled' }, receipt };
      }
    }
    return { ok: false, failure: last, receipt };
  }

  #read(payload: string, receipt: Receipt): ChatOutcome {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return { ok: false, failure: { kind: 'bad-response', message: 'response is not JSON' }, receipt };
    }
    const r = ResponseSchema.safeParse(json);
    if (!r.success) return { ok: false, failure: { kind: 'bad-response', message: 'response is not a chat completion' }, receipt };
    const usage = r.data.usage ?? null;
    receipt.promptTokens = usage?.prompt_tokens ?? null;
    receipt.completionTokens = usage?.completion_tokens ?? null;
    receipt.totalTokens =
      usage?.total_tokens ?? (receipt.promptTokens !== null && receipt.completionTokens !== null ? receipt.promptTokens + receipt.completionTokens : null);
    const price = this.#cfg.pricing;
    if (price !== null && receipt.promptTokens !== null && receipt.completionTokens !== null) {
      receipt.cost = (receipt.promptTokens * price.inputPerMillionTokens + receipt.completionTokens * price.outputPerMillionTokens) / 1e6;
      receipt.currency = price.currency;
    }
    const served = r.data.model;
    if (served !== undefined && served !== served.trim()) {
      return { ok: false, failure: { kind: 'bad-response', message: 'served model name has surrounding whitespace' }, receipt };
    }
    const choice = r.data.choices[0];
    if (choice === undefined || typeof choice.message?.content !== 'string') {
      return { ok: false, failure: { kind: 'bad-response', message: 'no message content' }, receipt };
    }
    return {
      ok: true,
      content: choice.message.content,
      logprobs: choice.logprobs?.content ?? null,
      servedModel: served === undefined || served === '' ? null : served,
      receipt,
    };
  }
}

const count = z.int().min(0);
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
  usage: z
    .object({ prompt_tokens: count.optional(), completion_tokens: count.optional(), total_tokens: count.optional() })
    .nullable()
    .optional(),
});

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
