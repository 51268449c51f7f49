import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/findings/schema.ts';
import { OUTDATED_CERTIFICATE_FORMAT } from '../../src/judge/certificate.ts';
import { JudgeClientSchema, type JudgeClientConfig } from '../../src/judge/client.ts';
import type { JudgeConfig } from '../../src/judge/config.ts';
import { evaluatorIdentity } from '../../src/judge/evaluator-identity.ts';
import { SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { boundCertificate, installBoundCertificates } from './certificate-fixture.ts';
import { harness, judgeAll, recommendationOf, SERVED, valuesOf, type Harness } from './judge-harness.ts';
import { answers, completion } from './scripted-chat-server.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint, which cannot run here.

const Q0 = SEMANTIC_QUESTIONS[0]!.id;
const started: Harness[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((h) => h.server.close()));
});

/** Every request answers "yes" (p 0.97) to the first question and "no" to the rest. */
const positive = () => ({ body: completion(answers({ 0: { letter: 'A', support: 'e1', p: 0.97 } })) });

async function positiveHarness(client: Record<string, unknown> = {}): Promise<Harness> {
  const h = await harness(positive, client);
  started.push(h);
  return h;
}

const q0 = (fs: readonly Finding[]) => fs.filter((f) => f.area === Q0);
const reasonsByLayer = (fs: readonly Finding[]) => Object.fromEntries(q0(fs).map((f) => [f.layer, recommendationOf(f).reason]));

describe('a certificate qualifies only the request, layer and evaluator it was issued for', () => {
  it('an event-window certificate qualifies event windows, not turn or agent windows', async () => {
    const h = await positiveHarness();
    await installBoundCertificates(h.dataDir, h.cfg, { servedModel: SERVED }, 'q0', ['event']);
    const r = await judgeAll(h.dataDir, h.cfg);
    const layers = new Set(q0(r.findings).map((f) => f.layer));
    expect(layers).toEqual(new Set(['event', 'turn']));
    for (const f of q0(r.findings)) {
      if (f.layer === 'event') expect(recommendationOf(f)).toEqual({ action: 'act', route: 'coordinator-alarm', reason: 'calibrated' });
      else expect(recommendationOf(f)).toEqual({ action: 'escalate', route: null, reason: 'certificate-layer-mismatch' });
    }
    expect(r.alarms.map((f) => f.layer).every((l) => l === 'event')).toBe(true);
    expect(r.alarms.length).toBe(q0(r.findings).filter((f) => f.layer === 'event').length);
  });

  it.each<[string, Partial<JudgeClientConfig>, string]>([
    ['another retry policy', { retries: 0 }, 'certificate-evaluator-mismatch'],
    ['another timeout', { timeoutMs: 4_000 }, 'certificate-evaluator-mismatch'],
    ['another pricing policy', { pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 1, currency: 'USD' } }, 'certificate-evaluator-mismatch'],
    ['another output cap', { maxOutputTokens: 512 }, 'certificate-request-contract-mismatch'],
    ['fewer logprobs', { topLogprobs: 3 }, 'certificate-request-contract-mismatch'],
  ])('escalates under %s, naming the binding', async (_name, change, reason) => {
    const h = await positiveHarness();
    await installBoundCertificates(h.dataDir, h.cfg, { servedModel: SERVED });
    const changed: JudgeConfig = { ...h.cfg, client: { ...h.cfg.client, ...change } };
    const r = await judgeAll(h.dataDir, changed);
    expect(r.alarms).toEqual([]);
    expect(q0(r.findings).length).toBeGreaterThan(0);
    for (const f of q0(r.findings)) expect(recommendationOf(f)).toMatchObject({ action: 'escalate', reason });
    expect(Object.values(r.dp.stats().certified).some(Boolean)).toBe(false);
  });

  it('a certificate issued under the line protocol (the default before json_schema) is retired, not reused, under the default protocol', async () => {
    const h = await positiveHarness({ answerFormat: 'lines' });
    await installBoundCertificates(h.dataDir, h.cfg, { servedModel: SERVED });
    const byDefault: JudgeConfig = { ...h.cfg, client: { ...h.cfg.client, answerFormat: JudgeClientSchema.parse({}).answerFormat } };
    expect(byDefault.client.answerFormat).toBe('json_schema');
    const r = await judgeAll(h.dataDir, byDefault);
    expect(r.alarms).toEqual([]);
    expect(q0(r.findings).length).toBeGreaterThan(0);
    for (const f of q0(r.findings)) expect(recommendationOf(f)).toMatchObject({ action: 'escalate', reason: 'certificate-request-contract-mismatch' });
    expect(Object.values(r.dp.stats().certified).some(Boolean)).toBe(false);
  });

  it('escalates under another endpoint (provider) for the same model', async () => {
    const h = await positiveHarness();
    await installBoundCertificates(h.dataDir, h.cfg, { servedModel: SERVED });
    // The same server reached under another name is, for all trajwatch can tell, another provider.
    const other: JudgeConfig = { ...h.cfg, client: { ...h.cfg.client, baseUrl: h.cfg.client.baseUrl.replace('127.0.0.1', 'localhost') } };
    const r = await judgeAll(h.dataDir, other);
    for (const f of q0(r.findings)) expect(recommendationOf(f).reason).toBe('certificate-evaluator-mismatch');
  });

  it('a certificate of the first format (no such bindings) loads but never qualifies: certificate-format-outdated', async () => {
    const h = await positiveHarness();
    const {
      windowKind: _k,
      requestContractDigest: _r,
      evaluatorDigest: _e,
      kappaInterval: _i,
      ...old
    } = boundCertificate(h.cfg, 'event', { servedModel: SERVED }) as Record<string, unknown>;
    const dir = join(h.dataDir, h.cfg.certificatesDir);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'old.json'), JSON.stringify({ ...old, format: OUTDATED_CERTIFICATE_FORMAT }));
    const r = await judgeAll(h.dataDir, h.cfg);
    expect(r.alarms).toEqual([]);
    expect(new Set(Object.values(reasonsByLayer(r.findings)))).toEqual(new Set(['certificate-format-outdated']));
  });

  it('records the bindings on each ledger result, so calibration can issue certificates per layer', async () => {
    const h = await positiveHarness();
    const r = await judgeAll(h.dataDir, h.cfg);
    for (const f of q0(r.findings)) expect(valuesOf(f).window_kind).toBe(f.layer);
    const { readLedger } = await import('../../src/judge/ledger/ledger.ts');
    const results = (await readLedger(join(h.dataDir, 'judge', 'ledger.jsonl'))).filter((x) => x.type === 'result');
    expect(results.length).toBeGreaterThan(0);
    for (const x of results) {
      if (x.type !== 'result') continue;
      expect(x.evaluatorDigest).toBe(evaluatorIdentity(h.cfg.client).digest);
      expect(x.requestContractDigest).toMatch(/^[0-9a-f]{64}$/);
      expect(['event', 'turn']).toContain(x.windowKind);
    }
  });
});

describe('evaluator identity', () => {
  const base = JudgeClientSchema.parse({ baseUrl: 'https://api.example.com/v1', model: 'm' });
  const digest = (over: Partial<JudgeClientConfig>) => evaluatorIdentity({ ...base, ...over }).digest;

  it('is deterministic and changes with endpoint, model, retry policy and pricing', () => {
    expect(digest({})).toBe(evaluatorIdentity(JudgeClientSchema.parse({ baseUrl: 'https://api.example.com/v1', model: 'm' })).digest);
    const changed = [
      { baseUrl: 'https://other.example.com/v1' },
      { baseUrl: 'https://api.example.com/v2' },
      { model: 'm2' },
      { retries: 3 },
      { backoffMs: 100 },
      { timeoutMs: 10_000 },
      { pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 2, currency: 'USD' } },
      { pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 2, currency: 'EUR' } },
    ].map((o) => digest(o));
    expect(new Set([digest({}), ...changed]).size).toBe(changed.length + 1);
  });

  it('never covers credentials: key variable, URL user info or key-like query parameters', () => {
    expect(digest({ apiKeyEnv: 'OTHER_KEY' })).toBe(digest({}));
    expect(digest({ apiKeyEnv: null })).toBe(digest({}));
    expect(digest({ baseUrl: 'https://user:s3cret-pw@api.example.com/v1/' })).toBe(digest({}));
    expect(digest({ baseUrl: 'https://api.example.com/v1?api_key=s3cret-key' })).toBe(digest({}));
    const id = evaluatorIdentity({ ...base, baseUrl: 'https://user:s3cret-pw@api.example.com/v1?api-key=s3cret-key&api-version=2024' });
    expect(JSON.stringify(id)).not.toMatch(/s3cret|user/);
    expect(id.parts.endpoint).toBe('https://api.example.com/v1?api-version=2024');
  });
});
