import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { loadSeeds, type Seed } from './corpus.ts';
import { CONTENT_TYPE, fuzzBody, VALID_STATUSES } from './mutate.ts';

let serve: ServeProcess;
let seeds: Seed[];
beforeAll(async () => {
  seeds = await loadSeeds();
  serve = await startServe({ receiver: { maxDecompressedBytes: 8 * 1024 * 1024 } });
});
afterAll(async () => {
  await serve.stop();
});

describe('fuzzing a running serve with mutated bodies (fast subset; scripts/bench/fuzz.ts is the long run)', () => {
  it('answers every body with an OTLP status in the request content type, and stays healthy', async () => {
    const statuses = new Map<number, number>();
    const sample = fc.sample(fuzzBody(seeds), { numRuns: 300, seed: 11 });
    for (const b of sample) {
      const headers: Record<string, string> = { 'content-type': CONTENT_TYPE[b.format] };
      if (b.gzip) headers['content-encoding'] = 'gzip';
      const res = await fetch(`${serve.url}/v1/traces`, { method: 'POST', headers, body: b.body });
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect(VALID_STATUSES.has(res.status), `${b.seed}: ${res.status} ${text.slice(0, 200)}`).toBe(true);
      expect(res.headers.get('content-type')).toBe(CONTENT_TYPE[b.format]);
      if (b.format === 'json') expect(() => JSON.parse(text)).not.toThrow();
    }
    expect(statuses.get(200)).toBeGreaterThan(0);
    expect(statuses.get(400)).toBeGreaterThan(0);
    expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
    expect(serve.output()).not.toMatch(/receiver failed on a request/);
  });
});
