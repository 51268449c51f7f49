import { describe, expect, it } from 'vitest';
import { excerpt } from '../../src/checks/hit-text.ts';
import { redactSecrets } from '../../src/core/redact.ts';

describe('redaction rules added for issue 9', () => {
  it('drops the password of a URL and keeps user, host and path', () => {
    const r = redactSecrets('connect postgres://admin:Pl4nted@db.internal:5432/app and https://u:p4ss@example.com/x');
    expect(r.text).toBe('connect postgres://admin:[REDACTED:url-password]@db.internal:5432/app and https://u:[REDACTED:url-password]@example.com/x');
    expect(r.count).toBe(2);
  });

  it('leaves URLs without a password alone', () => {
    const text = 'see https://example.com:8443/a/b?c=d and git@github.com:org/repo.git';
    expect(redactSecrets(text)).toEqual({ text, count: 0 });
  });

  it('redacts AWS secret access keys by their key name, also after an escaped newline inside JSON-in-JSON', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    for (const text of [
      `aws_secret_access_key = ${secret}`,
      JSON.stringify({ AWS_SECRET_ACCESS_KEY: secret }),
      JSON.stringify({ out: JSON.stringify({ env: `A=1\naws_secret_access_key=${secret}` }) }),
      JSON.stringify({ out: `x\npassword=${secret}` }),
    ]) {
      const r = redactSecrets(text);
      expect(r.text, text).not.toContain(secret);
      expect(r.count).toBe(1);
    }
  });

  it('redacts a finding excerpt before cutting it, so half a key cannot slip past the rules', () => {
    const key = 'sk-proj-AbCdEf0123456789GhIjKlMn';
    expect(excerpt(`failed: ${key}`, 20)).not.toContain('sk-proj-AbCd');
    expect(excerpt(`failed: ${key}`, 200)).toBe('failed: [REDACTED:openai-key]');
    expect(excerpt('-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----', 200)).toBe('[REDACTED:private-key]');
  });
});
