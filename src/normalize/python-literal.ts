import type { ParsedJson } from './json-text.ts';

/**
 * Reads `text` as a Python literal of the kinds `repr()` writes for JSON-like data — a dict
 * with string keys, a list or tuple, a string, an int, a float, `True`, `False`, `None` — into
 * the JSON value it stands for (a tuple as an array). Strict: anything else (another key type,
 * a string prefix such as `b''` or `f''`, an expression, `inf`/`nan`, an int too large for a
 * double to hold exactly, trailing text, nesting deeper than {@link MAX_DEPTH}) is
 * `undefined`, never a guess. Instrumentations that record `str(kwargs)` write this form;
 * trajwatch reads it only to compare it with arguments it has as JSON (`linkRequests`).
 *
 * @example parsePythonLiteral("{'city': 'Lisbon', 'days': 2}") // { value: { city: 'Lisbon', days: 2 } }
 * @example parsePythonLiteral("{1: 'a'}") // undefined: a key JSON cannot hold
 */
export function parsePythonLiteral(text: string): ParsedJson | undefined {
  const reader = new Reader(text);
  const value = reader.value(0);
  if (value === NOT || !reader.atEnd()) return undefined;
  return { value };
}

/** Bound on nesting, so a hostile capture cannot exhaust the stack. */
export const MAX_DEPTH = 64;

const NOT = Symbol('not a literal');
type Read = unknown | typeof NOT;

class Reader {
  #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  atEnd(): boolean {
    this.#space();
    return this.#at === this.#text.length;
  }

  value(depth: number): Read {
    if (depth > MAX_DEPTH) return NOT;
    this.#space();
    const c = this.#text[this.#at];
    if (c === '{') return this.#dict(depth);
    if (c === '[') return this.#sequence(depth, ']');
    if (c === '(') return this.#sequence(depth, ')');
    if (c === "'" || c === '"') return this.#string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.#number();
    for (const [word, value] of WORDS) {
      if (this.#text.startsWith(word, this.#at) && !isNameChar(this.#text[this.#at + word.length])) {
        this.#at += word.length;
        return value;
      }
    }
    return NOT;
  }

  #dict(depth: number): Read {
    this.#at++;
    const out: Record<string, unknown> = {};
    for (let first = true; ; first = false) {
      this.#space();
      if (this.#eat('}')) return out;
      if (!first && !this.#eat(',')) return NOT;
      this.#space();
      if (!first && this.#eat('}')) return out;
      const key = this.value(depth + 1);
      if (typeof key !== 'string') return NOT;
      this.#space();
      if (!this.#eat(':')) return NOT;
      const value = this.value(depth + 1);
      if (value === NOT || Object.hasOwn(out, key)) return NOT;
      out[key] = value;
    }
  }

  #sequence(depth: number, close: string): Read {
    this.#at++;
    const out: unknown[] = [];
    for (let first = true; ; first = false) {
      this.#space();
      if (this.#eat(close)) return out;
      if (!first && !this.#eat(',')) return NOT;
      this.#space();
      if (!first && this.#eat(close)) return out;
      const value = this.value(depth + 1);
      if (value === NOT) return NOT;
      out.push(value);
    }
  }

  #string(): Read {
    const quote = this.#text[this.#at++]!;
    let out = '';
    while (this.#at < this.#text.length) {
      const c = this.#text[this.#at++]!;
      if (c === quote) return out;
      if (c === '\n') return NOT;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.#text[this.#at++];
      const simple = e === undefined ? undefined : ESCAPES[e];
      if (simple !== undefined) out += simple;
      else if (e === 'x' || e === 'u' || e === 'U') {
        const width = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = this.#text.slice(this.#at, this.#at + width);
        if (hex.length !== width || !/^[0-9a-fA-F]+$/.test(hex)) return NOT;
        const code = Number.parseInt(hex, 16);
        if (code > 0x10ffff) return NOT;
        out += String.fromCodePoint(code);
        this.#at += width;
      } else return NOT;
    }
    return NOT;
  }

  #number(): Read {
    const match = NUMBER.exec(this.#text.slice(this.#at));
    if (match === null || isNameChar(this.#text[this.#at + match[0].length])) return NOT;
    this.#at += match[0].length;
    const value = Number(match[0]);
    if (!Number.isFinite(value)) return NOT;
    // An int a double cannot hold exactly would compare equal to a different JSON number.
    if (match[1] === undefined && match[2] === undefined && !Number.isSafeInteger(value)) return NOT;
    return value;
  }

  #eat(c: string): boolean {
    if (this.#text[this.#at] !== c) return false;
    this.#at++;
    return true;
  }

  #space(): void {
    while (this.#at < this.#text.length && ' \t\n\r'.includes(this.#text[this.#at]!)) this.#at++;
  }
}

/** Python's `repr` of an int or a float: digits, an optional fraction, an optional exponent. */
const NUMBER = /^-?(?:0|[1-9][0-9]*)(\.[0-9]*)?([eE][-+]?[0-9]+)?/;

const WORDS: readonly (readonly [string, unknown])[] = [
  ['True', true],
  ['False', false],
  ['None', null],
];

const ESCAPES: Record<string, string> = { '\\': '\\', "'": "'", '"': '"', n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };

function isNameChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_.]/.test(c);
}
