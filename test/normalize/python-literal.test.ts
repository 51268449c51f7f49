import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parsePythonLiteral, MAX_DEPTH } from '../../src/normalize/python-literal.ts';

describe('parsePythonLiteral: the repr of JSON-like Python data, strictly', () => {
  it('reads dicts, lists, tuples, strings, ints, floats, True, False, None', () => {
    expect(parsePythonLiteral("{'city': 'Lisbon', 'days': 2, 'temp': -1.5, 'metric': True, 'note': None, 'tags': ['a', \"b's\"], 'at': (1, 2)}")).toEqual({
      value: { city: 'Lisbon', days: 2, temp: -1.5, metric: true, note: null, tags: ['a', "b's"], at: [1, 2] },
    });
    expect(parsePythonLiteral('{}')).toEqual({ value: {} });
    expect(parsePythonLiteral("  ['x',]  ")).toEqual({ value: ['x'] });
    expect(parsePythonLiteral("'a\\'b\\\\c\\n\\x41\\u00e9\\U0001F600'")).toEqual({ value: "a'b\\c\nAé😀" });
    expect(parsePythonLiteral('1e-05')).toEqual({ value: 1e-5 });
  });

  it('refuses what is not such a literal, or what JSON cannot hold exactly', () => {
    for (const text of [
      "{1: 'a'}", // a key JSON cannot hold
      "{'a': 1, 'a': 2}", // a duplicate key: repr never writes one
      "b'bytes'",
      "f'{x}'",
      "{'a': inf}",
      'nan',
      '12345678901234567890', // not exactly a double
      "{'a': 1} trailing",
      "{'a' 1}",
      "{'a': 1,, 'b': 2}",
      "'unterminated",
      "'bad \\q escape'",
      'true', // JSON's spelling, not Python's
      'Truex',
      '<object at 0x7f>',
      'Paris',
      '',
    ]) {
      expect(parsePythonLiteral(text), text).toBeUndefined();
    }
  });

  it(`bounds nesting at ${MAX_DEPTH}`, () => {
    expect(parsePythonLiteral('['.repeat(MAX_DEPTH) + ']'.repeat(MAX_DEPTH))).toBeDefined();
    expect(parsePythonLiteral('['.repeat(MAX_DEPTH + 2) + ']'.repeat(MAX_DEPTH + 2))).toBeUndefined();
    expect(parsePythonLiteral('['.repeat(100_000))).toBeUndefined();
  });

  it('agrees with Python itself: repr() of random JSON-like data reads back as the same value', () => {
    const json = fc
      .jsonValue({ maxDepth: 3 })
      .filter((v) => !JSON.stringify(v).includes('-0') && JSON.stringify(v) === JSON.stringify(JSON.parse(JSON.stringify(v))));
    const samples = fc.sample(json, 60);
    // Python writes the repr of each sample (via json.loads, so the values are the same ones).
    const script = 'import json,sys\nfor line in sys.stdin:\n    print(repr(json.loads(line)))';
    const reprs = execFileSync('python3', ['-c', script], { input: samples.map((s) => JSON.stringify(s)).join('\n') + '\n' })
      .toString()
      .trimEnd()
      .split('\n');
    expect(reprs.length).toBe(samples.length);
    samples.forEach((sample, i) => {
      const read = parsePythonLiteral(reprs[i]!);
      // ints beyond 2^53 and floats Python prints as inf are refused, never misread
      if (read === undefined) expect(reprs[i]).toMatch(/\d{16,}|inf|nan|e\+?\d/);
      else expect(read.value, reprs[i]).toEqual(JSON.parse(JSON.stringify(sample)));
    });
  });
});
