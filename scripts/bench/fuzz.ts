/**
 * Long-run fuzzing of the OTLP decoders and the HTTP receiver (issue 9, "Bad input").
 *
 *   npx node scripts/bench/fuzz.ts --bodies 1000000 [--receiver-bodies 20000] [--seed 1]
 *
 * Phase 1 decodes `--bodies` mutated bodies in-process (gzip with the receiver's cap, then the
 * protobuf or JSON decoder by claimed content type). Phase 2 sends `--receiver-bodies` more
 * to a real `trajwatch serve` child over loopback and checks each answer: a status the OTLP
 * spec allows, in the request's content type, with a readable body. A body counts as a crash
 * when decoding throws, as a hang when it takes longer than `HANG_MS` (or gets no answer).
 * Prints a JSON summary; exits 1 on any crash, hang or invalid answer.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { DecodeError, LimitError } from '../../src/errors.ts';
import { gunzipCapped } from '../../src/ingest/otlp/body.ts';
import { decodeOtlpJson } from '../../src/ingest/otlp/json-decode.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp/proto-decode.ts';
import { loadSeeds } from '../../test/fuzz/corpus.ts';
import { CONTENT_TYPE, fuzzBody, type FuzzBody, VALID_STATUSES } from '../../test/fuzz/mutate.ts';

const HANG_MS = 2_000;
const RECEIVER_TIMEOUT_MS = 10_000;
const RECEIVER_CONCURRENCY = 8;
const MAX_DECOMPRESSED_BYTES = 8 * 1024 * 1024;

const { values } = parseArgs({
  options: {
    bodies: { type: 'string', default: '100000' },
    'receiver-bodies': { type: 'string' },
    seed: { type: 'string', default: '1' },
  },
});
const bodies = Number(values.bodies);
const receiverBodies = Number(values['receiver-bodies'] ?? Math.min(20_000, Math.ceil(bodies / 50)));
const seed = Number(values.seed);

const seeds = await loadSeeds({ wholeTrail: true });

async function decoderPhase() {
  const outcomes: Record<string, number> = { decoded: 0, 'decode-error': 0, 'limit-error': 0 };
  const crashes: string[] = [];
  let hangs = 0;
  let maxMs = 0;
  let bytes = 0;
  const started = performance.now();
  let n = 0;
  await fc.assert(
    fc.asyncProperty(fuzzBody(seeds), async (b) => {
      n++;
      bytes += b.body.length;
      const t0 = performance.now();
      try {
        const body = b.gzip ? await gunzipCapped(b.body, MAX_DECOMPRESSED_BYTES) : b.body;
        const result = body instanceof Error ? body : b.format === 'protobuf' ? decodeOtlpProto(body) : decodeOtlpJson(body.toString('utf8'));
        const key = result instanceof LimitError ? 'limit-error' : result instanceof DecodeError ? 'decode-error' : 'decoded';
        outcomes[key]!++;
      } catch (err) {
        if (crashes.length < 20) crashes.push(`${b.seed} (${b.format}${b.gzip ? ', gzip' : ''}): ${(err as Error).stack ?? String(err)}`);
      }
      const ms = performance.now() - t0;
      if (ms > maxMs) maxMs = ms;
      if (ms > HANG_MS) hangs++;
      if (n % 100_000 === 0) process.stderr.write(`fuzz: ${n} bodies decoded\n`);
    }),
    { numRuns: bodies, seed, endOnFailure: true },
  );
  return {
    bodies: n,
    bytes,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    outcomes,
    crashes: crashes.length,
    crashSamples: crashes,
    hangs,
    maxDecodeMs: Math.round(maxMs * 10) / 10,
  };
}

interface Serve {
  url: string;
  child: ChildProcess;
  output: () => string;
}

async function startServe(dataDir: string): Promise<Serve> {
  const configPath = join(dataDir, 'config.json');
  await writeFile(
    configPath,
    JSON.stringify({ receiver: { maxDecompressedBytes: MAX_DECOMPRESSED_BYTES }, assembler: { quietPeriodMs: 200, idleTimeoutMs: 2_000 } }),
  );
  const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, [cli, 'serve', '--otlp-http', '127.0.0.1:0', '--data-dir', dataDir, '--config', configPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const m = /listening on https?:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m !== null) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child, output: () => out };
}

async function receiverPhase() {
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-fuzz-'));
  const serve = await startServe(dataDir);
  const statuses: Record<string, number> = {};
  const invalid: string[] = [];
  let hangs = 0;
  const sample = fc.sample(fuzzBody(seeds), { numRuns: receiverBodies, seed: seed + 1 });
  const started = performance.now();
  let next = 0;
  const send = async (b: FuzzBody) => {
    const headers: Record<string, string> = { 'content-type': CONTENT_TYPE[b.format] };
    if (b.gzip) headers['content-encoding'] = 'gzip';
    try {
      const res = await fetch(`${serve.url}/v1/traces`, {
        method: 'POST',
        headers,
        body: b.body,
        signal: AbortSignal.timeout(RECEIVER_TIMEOUT_MS),
      });
      const text = Buffer.from(await res.arrayBuffer());
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      const type = res.headers.get('content-type');
      const readable = b.format === 'json' ? isJson(text) : true;
      if (!VALID_STATUSES.has(res.status) || type !== CONTENT_TYPE[b.format] || !readable) {
        if (invalid.length < 20) invalid.push(`${b.seed}: ${res.status} ${type} ${text.subarray(0, 120).toString()}`);
      }
    } catch (err) {
      hangs++;
      if (invalid.length < 20) invalid.push(`${b.seed}: no answer: ${(err as Error).message}`);
    }
  };
  await Promise.all(
    Array.from({ length: RECEIVER_CONCURRENCY }, async () => {
      while (next < sample.length) await send(sample[next++]!);
    }),
  );
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  const health = await fetch(`${serve.url}/healthz`).then(
    (r) => r.status,
    () => 0,
  );
  const exitCode = await new Promise<number | null>((resolve) => {
    serve.child.once('exit', (code) => resolve(code));
    serve.child.kill('SIGTERM');
  });
  await rm(dataDir, { recursive: true, force: true });
  return { bodies: sample.length, seconds, statuses, invalidAnswers: invalid.length, invalidSamples: invalid, hangs, healthAfter: health, exitCode };
}

function isJson(text: Buffer): boolean {
  try {
    JSON.parse(text.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

const decoders = await decoderPhase();
const receiver = await receiverPhase();
const summary = { seeds: seeds.length, seed, decoders, receiver };
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
const failed =
  decoders.crashes > 0 || decoders.hangs > 0 || receiver.invalidAnswers > 0 || receiver.hangs > 0 || receiver.healthAfter !== 200 || receiver.exitCode !== 0;
process.exit(failed ? 1 : 0);
