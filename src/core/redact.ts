/**
 * The one set of secret-redaction rules: applied to every text before it can leave the process
 * (windows for the judge, check hit texts) and to every log line (`telemetry/logger.ts`). Each
 * text rule replaces the secret part with a mark (`[REDACTED:<rule>]` by default) and keeps the
 * surrounding key, so the judge still sees that a credential was there. Deliberately broad: a
 * false positive costs a little context, a false negative leaks a credential to a model
 * provider or a log store.
 */
interface Rule {
  name: string;
  pattern: RegExp;
  /** Builds the replacement from the mark and the match groups; default replaces the whole match. */
  replace?: (mark: string, match: string, ...groups: string[]) => string;
}

/**
 * A key whose value is a credential, as words (`['client', 'secret']` is `client_secret`,
 * `client-secret`, `clientSecret`, `clientsecret`). `text` says how free text is searched for it:
 * `credential`, by the generic `key=value` / `"key": "value"` rule; `own`, by a rule of its own
 * below (its value has a known shape); `none`, not at all — the word is too common in prose
 * (`key`, `cookie`) to mark every `key: ...`, but under such a key in a log context the value
 * is a credential. Names of where a secret comes from (`tokenEnv`, `passwordFile`, `keyFile`)
 * are not secrets: they are what an operator needs to fix a configuration.
 */
interface SecretKey {
  words: readonly string[];
  text: 'credential' | 'own' | 'none';
}

/** Every key whose value is a credential, wherever it appears. */
export const SECRET_KEYS: readonly SecretKey[] = [
  // The generic credential rule, in the order of its alternation.
  { words: ['password'], text: 'credential' },
  { words: ['passwd'], text: 'credential' },
  { words: ['pwd'], text: 'credential' },
  { words: ['secret'], text: 'credential' },
  { words: ['client', 'secret'], text: 'credential' },
  { words: ['api', 'key'], text: 'credential' },
  { words: ['access', 'token'], text: 'credential' },
  { words: ['refresh', 'token'], text: 'credential' },
  { words: ['auth', 'token'], text: 'credential' },
  { words: ['token'], text: 'credential' },
  { words: ['private', 'key'], text: 'credential' },
  // Their own rules: `authorization`, `aws-secret-key`.
  { words: ['authorization'], text: 'own' },
  { words: ['proxy', 'authorization'], text: 'own' },
  { words: ['aws', 'secret', 'access', 'key'], text: 'own' },
  { words: ['aws', 'secret', 'access', 'key', 'id'], text: 'own' },
  { words: ['secret', 'access', 'key'], text: 'own' },
  { words: ['secret', 'access', 'key', 'id'], text: 'own' },
  // Keys only.
  { words: ['passphrase'], text: 'none' },
  { words: ['bearer'], text: 'none' },
  { words: ['cookie'], text: 'none' },
  { words: ['set', 'cookie'], text: 'none' },
  { words: ['x', 'api', 'key'], text: 'none' },
  { words: ['key'], text: 'none' },
  { words: ['oauth', 'bearer'], text: 'none' },
  { words: ['session', 'token'], text: 'none' },
];

const KEY_NAMES: ReadonlySet<string> = new Set(SECRET_KEYS.map((k) => k.words.join('')));

/** Whether a key (of a log context, a header) names a credential: compared lowercased, without `-`/`_`. */
export function isSecretKey(key: string): boolean {
  return KEY_NAMES.has(key.toLowerCase().replace(/[-_]/g, ''));
}

/** The key alternation of the generic rule: `password|passwd|...|client[_-]?secret|...`. */
const CREDENTIAL_KEYS = SECRET_KEYS.filter((k) => k.text === 'credential')
  .map((k) => k.words.join('[_-]?'))
  .join('|');

/** The default mark: `[REDACTED:<rule>]`. */
const markRule = (name: string) => `[REDACTED:${name}]`;

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
    replace: (mark, _m, key) => `${key}${mark}`,
  },
  {
    name: 'bearer',
    pattern: /(\bbearer\s+)([A-Za-z0-9._~+/=-]{8,})/gi,
    replace: (mark, _m, key) => `${key}${mark}`,
  },
  {
    name: 'url-password',
    // scheme://user:password@host — keeps the user and host, drops the password.
    pattern: /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@"'\\]*:)([^\s@/"'\\]+)(@)/gi,
    replace: (mark, _m, head, _password, at) => `${head}${mark}${at}`,
  },
  {
    name: 'aws-secret-key',
    pattern: /(\\?"?(?:\b|(?<=\\[nrt]))(?:aws_?)?secret_?access_?key(?:_?id)?\\?"?\s*[:=]\s*\\?"?)([A-Za-z0-9/+=]{40})/gi,
    replace: (mark, _m, key) => `${key}${mark}`,
  },
  { name: 'openai-key', pattern: /\bsk-[A-Za-z0-9_-]{16,}/g },
  { name: 'aws-access-key', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { name: 'github-token', pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g },
  { name: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { name: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{30,}/g },
  {
    name: 'credential',
    // password=..., api_key: ..., "secret": "...", also inside JSON-escaped text.
    pattern: new RegExp(`(\\\\?"?(?:\\b|(?<=\\\\[nrt]))(?:${CREDENTIAL_KEYS})\\\\?"?\\s*[:=]\\s*\\\\?"?)((?!\\[REDACTED)[^\\s"\\\\,;&}]+)`, 'gi'),
    replace: (mark, _m, key) => `${key}${mark}`,
  },
];

export interface Redacted {
  text: string;
  /** How many secrets were replaced. */
  count: number;
}

/**
 * Replace every secret the rules recognize. Pure. `mark` names the replacement for a rule
 * (default `[REDACTED:<rule>]`; the logger's is `[redacted]`).
 *
 * @example
 * redactSecrets('password=hunter2').text // 'password=[REDACTED:credential]'
 */
export function redactSecrets(text: string, mark: (rule: string) => string = markRule): Redacted {
  let count = 0;
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
      count++;
      const groups = rest.filter((g): g is string => typeof g === 'string');
      return rule.replace === undefined ? mark(rule.name) : rule.replace(mark(rule.name), match, ...groups);
    });
  }
  return { text: out, count };
}
