import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { CERTIFICATE_FORMAT, loadCertificates, OUTDATED_CERTIFICATE_FORMAT, type CertificationContext } from '../../src/judge/certificate.ts';
import { L4_GAP_KIND } from '../../src/judge/walk/layer-questions.ts';
import { questionDigest, SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { validCertificate } from './certificate-fixture.ts';

const Q = SEMANTIC_QUESTIONS[0]!;
const POLICY = 'd'.repeat(64);

async function dirWith(files: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-certs-'));
  await mkdir(dir, { recursive: true });
  for (const [name, body] of Object.entries(files)) await writeFile(join(dir, name), typeof body === 'string' ? body : JSON.stringify(body));
  return dir;
}

const CERT = validCertificate();
const ctx: CertificationContext = {
  questionId: Q.id,
  windowPolicyDigest: POLICY,
  windowKind: 'event',
  requestContractDigest: CERT.format === CERTIFICATE_FORMAT ? CERT.requestContractDigest : '',
  evaluatorDigest: CERT.format === CERTIFICATE_FORMAT ? CERT.evaluatorDigest : '',
  requestedModel: 'judge',
  servedModel: 'judge-served',
  minKappa: 0.6,
};

describe('certificates', () => {
  it('treats a missing directory as none installed', async () => {
    const store = await loadCertificates(join(tmpdir(), 'no-such-dir-trajwatch'));
    expect(store.certify(ctx)).toEqual({ valid: false, reason: 'uncalibrated' });
  });

  it('certifies only the exact question, option order, window policy, requested and served model', async () => {
    const store = await loadCertificates(await dirWith({ 'c1.json': validCertificate() }));
    expect(store.certify(ctx)).toEqual({ valid: true, certificateId: 'c1' });
    expect(store.certify({ ...ctx, questionId: SEMANTIC_QUESTIONS[1]!.id })).toEqual({ valid: false, reason: 'uncalibrated' });
    expect(store.certify({ ...ctx, windowPolicyDigest: 'e'.repeat(64) }).valid).toBe(false);
    expect(store.certify({ ...ctx, requestedModel: 'other' })).toEqual({ valid: false, reason: 'certificate-model-mismatch' });
    expect(store.certify({ ...ctx, servedModel: 'judge-served-v2' })).toEqual({ valid: false, reason: 'certificate-served-model-mismatch' });
    expect(store.certify({ ...ctx, servedModel: null })).toEqual({ valid: false, reason: 'certificate-served-model-mismatch' });
    expect(store.certify({ ...ctx, minKappa: 0.8 })).toEqual({ valid: false, reason: 'certificate-below-minimum' });
  });

  it('binds the layer, the request contract and the evaluator: another of any escalates, naming it', async () => {
    const store = await loadCertificates(await dirWith({ 'c1.json': validCertificate() }));
    expect(store.certify({ ...ctx, windowKind: 'turn' })).toEqual({ valid: false, reason: 'certificate-layer-mismatch' });
    expect(store.certify({ ...ctx, windowKind: 'agent' })).toEqual({ valid: false, reason: 'certificate-layer-mismatch' });
    expect(store.certify({ ...ctx, requestContractDigest: 'a'.repeat(64) })).toEqual({ valid: false, reason: 'certificate-request-contract-mismatch' });
    expect(store.certify({ ...ctx, evaluatorDigest: 'b'.repeat(64) })).toEqual({ valid: false, reason: 'certificate-evaluator-mismatch' });
    expect(store.certify(ctx)).toEqual({ valid: true, certificateId: 'c1' });
  });

  it('loads a certificate of the first format (no layer, contract or evaluator binding) but never lets it qualify', async () => {
    const { windowKind: _k, requestContractDigest: _r, evaluatorDigest: _e, kappaInterval: _i, ...old } = validCertificate() as Record<string, unknown>;
    const store = await loadCertificates(await dirWith({ 'old.json': { ...old, format: OUTDATED_CERTIFICATE_FORMAT } }));
    expect(store.size).toBe(1);
    expect(store.certify(ctx)).toEqual({ valid: false, reason: 'certificate-format-outdated' });
    expect(store.qualifies(ctx)).toBe(false);
    // The current format without its bindings is malformed, not outdated: start-up is refused.
    await expect(loadCertificates(await dirWith({ 'half.json': old }))).rejects.toBeInstanceOf(ConfigError);
  });

  it('does not let a reordered option list or a stale question digest qualify', async () => {
    const store = await loadCertificates(
      await dirWith({
        'a.json': validCertificate({ optionOrder: ['no', 'yes', 'unsure', 'unavailable'] }),
        'b.json': validCertificate({ questionDigest: '0'.repeat(64) }),
      }),
    );
    expect(store.certify(ctx)).toEqual({ valid: false, reason: 'certificate-stale-question' });
  });

  it('keeps a well-formed certificate below the bar installed but not qualifying (gold n 0, low kappa)', async () => {
    const low = { ...validCertificate().kappaInterval, lower: 0.1, upper: 0.5 };
    const store = await loadCertificates(
      await dirWith({ 'a.json': validCertificate({ goldN: 0 }), 'b.json': validCertificate({ kappa: 0.3, kappaInterval: low }) }),
    );
    expect(store.certify(ctx)).toEqual({ valid: false, reason: 'certificate-below-minimum' });
  });

  it('qualifies on the lower bound of the 95 % interval, not on kappa: kappa 0.72 with a lower bound of 0.41 (a small sample) does not', async () => {
    const small = validCertificate({ goldN: 12, kappa: 0.72, kappaInterval: { ...validCertificate().kappaInterval, lower: 0.41, upper: 1 } });
    const store = await loadCertificates(await dirWith({ 'small.json': small }));
    expect(store.certify(ctx)).toEqual({ valid: false, reason: 'certificate-below-minimum' });
    expect(store.certify({ ...ctx, minKappa: 0.4 })).toEqual({ valid: true, certificateId: 'small' });
    // An interval that does not hold its kappa is malformed: start-up is refused, naming it.
    const err = await loadCertificates(await dirWith({ 'odd.json': validCertificate({ kappa: 0.3 }) })).catch((e: unknown) => e);
    expect((err as ConfigError).issues.join()).toMatch(/odd\.json: kappaInterval/);
  });

  it('loads a certificate of the second format (issued on kappa alone, without an interval) but never lets it qualify', async () => {
    const { kappaInterval: _i, ...second } = validCertificate() as Record<string, unknown>;
    const store = await loadCertificates(await dirWith({ 'second.json': { ...second, format: 'trajwatch.certificate/2' } }));
    expect(store.size).toBe(1);
    expect(store.certify(ctx)).toEqual({ valid: false, reason: 'certificate-format-outdated' });
    expect(store.qualifies(ctx)).toBe(false);
  });

  it('refuses a certificate for the record-only L4 gap kind at start-up: that question never routes, so nothing can certify it', async () => {
    const gap = validCertificate({ questionId: L4_GAP_KIND.id, questionVersion: L4_GAP_KIND.version, questionDigest: questionDigest(L4_GAP_KIND) });
    const err = await loadCertificates(await dirWith({ 'gap.json': gap })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.join()).toMatch(/gap\.json: questionId/);
  });

  it('refuses malformed certificates at start-up, naming each file and problem', async () => {
    const dir = await dirWith({
      'ok.json': validCertificate(),
      'bad-json.json': '{not json',
      'no-refs.json': validCertificate({ evidenceRefs: [] }),
      'extra.json': { ...validCertificate(), note: 'x' },
    });
    const err = await loadCertificates(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues.join('\n');
    expect(issues).toMatch(/bad-json\.json: not JSON/);
    expect(issues).toMatch(/no-refs\.json: evidenceRefs/);
    expect(issues).toMatch(/extra\.json/);
    expect(issues).not.toMatch(/ok\.json/);
  });
});
