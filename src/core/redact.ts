/**
 * Secret redaction applied to every text before it can leave the process. Each rule replaces
 * the secret part with `[REDACTED:<rule>]` and keeps the surrounding key, so the judge still
 * sees that a credential was there. Deliberately broad: a false positive costs a little
 * context, a false negative leaks a credential to a model provider.
 */
interface Rule {
  name: string;
  pattern: RegExp;
  /** Builds the replacement from the match groups; default replaces the whole match. */
  replace?: (match: string, ...groups: string[]) => string;
}

const mark = (name: string) => `[REDACTED:${name}]`;

// Order matters: whole-block and structured rules run before the generic key=value rule.
// Key rules also start right after an escaped `\n` (`\\naws_secret...` inside JSON-in-JSON), where \b sees no boundary.
const RULES: readonly Rule[] = [
  {
    name: 'private-key',
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  },
  { name: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g },
  {
    name: 'authorization',
    // `Authorization: Basic xyz`, `"authorization": "..."`, including JSON-escaped quotes.
    pattern: /(\\?"?(?:proxy-)?authorization\\?"?\s*[:=]\s*\\?"?)([^"\\\r\n,}]+)/gi,
    replace: (_m, key) => `${key}${mark('authorization')}`,
  },
  {
    name: 'bearer',
    pattern: /(\bbearer\s+)([A-Za-z0-9._~+/=-]{8,})/gi,
    replace: (_m, key) => `${key}${mark('bearer')}`,
  },
  {
    name: 'url-password',
    // scheme://user:password@host — keeps the user and host, drops the password.
    pattern: /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@"'\\]*:)([^\s@/"'\\]+)(@)/gi,
    replace: (_m, head, _password, at) => `${head}${mark('url-password')}${at}`,
  },
  {
    name: 'aws-secret-key',
    pattern: /(\\?"?(?:\b|(?<=\\[nrt]))(?:aws_?)?secret_?access_?key(?:_?id)?\\?"?\s*[:=]\s*\\?"?)([A-Za-z0-9/+=]{40})/gi,
    replace: (_m, key) => `${key}${mark('aws-secret-key')}`,
  },
  { name: 'openai-key', pattern: /\bsk-[A-Za-z0-9_-]{16,}/g },
  { name: 'aws-access-key', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { name: 'github-token', pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g },
  { name: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { name: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{30,}/g },
  {
    name: 'credential',
    // password=..., api_key: ..., "secret": "...", also inside JSON-escaped text.
    pattern:
      /(\\?"?(?:\b|(?<=\\[nrt]))(?:password|passwd|pwd|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|auth[_-]?token|token|private[_-]?key)\\?"?\s*[:=]\s*\\?"?)((?!\[REDACTED)[^\s"\\,;&}]+)/gi,
    replace: (_m, key) => `${key}${mark('credential')}`,
  },
];

export interface Redacted {
  text: string;
  /** How many secrets were replaced. */
  count: number;
}

/** Replace every secret the rules recognize. Pure. */
export function redactSecrets(text: string): Redacted {
  let count = 0;
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
      count++;
      const groups = rest.filter((g): g is string => typeof g === 'string');
      return rule.replace === undefined ? mark(rule.name) : rule.replace(match, ...groups);
    });
  }
  return { text: out, count };
}
