import { describe, expect, it } from 'vitest';
import { isSecretKey, redactSecrets, SECRET_KEYS } from '../../src/core/redact.ts';

const SECRETS = {
  openai: 'sk-proj-AbCdEf0123456789GhIjKlMn',
  aws: 'AKIAIOSFODNN7EXAMPLE',
  bearer: 'eyQ0ZXN0LXRva2VuLXZhbHVlLTEyMzQ1',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r4wW',
  password: 'hunter2-correct-horse',
  basic: 'dXNlcjpwYXNzd29yZA==',
  github: 'ghp_0123456789abcdefghijABCDEFGHIJ012345',
  pem: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----',
};

describe('redactSecrets', () => {
  it('removes every planted secret and counts each one', () => {
    const text = [
      `key=${SECRETS.openai}`,
      `aws ${SECRETS.aws}`,
      `Authorization: Bearer ${SECRETS.bearer}`,
      `token ${SECRETS.jwt}`,
      `password=${SECRETS.password}`,
      `{"password": "${SECRETS.password}"}`,
      `curl -H "authorization: Basic ${SECRETS.basic}"`,
      `gh ${SECRETS.github}`,
      SECRETS.pem,
    ].join('\n');
    const r = redactSecrets(text);
    for (const [name, secret] of Object.entries(SECRETS)) expect(r.text, name).not.toContain(secret);
    expect(r.text).not.toContain('MIIEowIBAAKCAQEA7bq');
    expect(r.count).toBeGreaterThanOrEqual(Object.keys(SECRETS).length);
    expect(r.text).toContain('[REDACTED:');
  });

  it('redacts inside JSON-escaped text (a tool result that is itself JSON)', () => {
    const inner = JSON.stringify({ api_key: 'plainsecretvalue123', note: 'ok' });
    const r = redactSecrets(JSON.stringify({ result: inner }));
    expect(r.text).not.toContain('plainsecretvalue123');
    expect(r.text).toContain('note');
    expect(r.count).toBe(1);
  });

  it('leaves ordinary text alone and counts nothing', () => {
    const text = 'The agent searched for "bearer bonds" and asked for the password reset page.';
    expect(redactSecrets(text)).toEqual({ text, count: 0 });
  });
});

describe('the secret keys', () => {
  it('are one list: each key the text rules search for is redacted as `key=value` and `"key": "value"`, and named a secret key', () => {
    for (const k of SECRET_KEYS) {
      for (const key of [k.words.join('_'), k.words.join('-'), k.words.join('')]) expect(isSecretKey(key), key).toBe(true);
      if (k.text === 'none') continue;
      const value = k.text === 'own' && k.words.includes('access') ? 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' : 'Zq7plainsecret';
      for (const text of [`${k.words.join('_')}=${value}`, JSON.stringify({ [k.words.join('_')]: value })]) {
        const r = redactSecrets(text);
        expect(r.text, text).not.toContain(value);
        expect(r.count, text).toBe(1);
      }
    }
  });

  it('leaves where a secret comes from, and counts named like credentials, readable', () => {
    for (const key of ['tokenEnv', 'passwordFile', 'keyFile', 'tokens', 'apiKeyEnv']) expect(isSecretKey(key), key).toBe(false);
  });

  it('marks with the rule by default, or with the mark a caller names', () => {
    expect(redactSecrets('password=hunter2x').text).toBe('password=[REDACTED:credential]');
    expect(redactSecrets('password=hunter2x Bearer abcdefgh12345', () => '[redacted]')).toEqual({ text: 'password=[redacted] Bearer [redacted]', count: 2 });
  });
});
