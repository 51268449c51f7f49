/**
 * JSON string escaper benchmark: input MB per CPU-second of `core/json-bytes.ts` (length then
 * write into a reused buffer, as a line splicer does; and `jsonStringBytes`, which allocates)
 * against the route it replaces, `Buffer.from(JSON.stringify(buf.toString('utf8')))`, on 64 KiB
 * values: ASCII prose, non-ASCII prose, text dense in quotes and newlines (JSON or code held
 * as text), invalid UTF-8 (the slow path) and 1 KiB ASCII (the per-call cost).
 *
 * Run: node_modules/.bin/node bench/json-bytes.ts [secondsPerCase]   (default 1; best of 5 slices)
 */
import { Buffer } from 'node:buffer';
import { jsonStringBytes, jsonStringLength, writeJsonString } from '../src/core/json-bytes.ts';
import { markdownTable, measureCases } from './measure.ts';

const KIB = 1024;

/** A deterministic text of about `bytes` UTF-8 bytes made of `words` joined by spaces. */
function textOf(words: readonly string[], bytes: number): Buffer {
  let seed = 42;
  const parts: string[] = [];
  let length = 0;
  while (length < bytes) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const word = words[seed % words.length]!;
    parts.push(word);
    length += Buffer.byteLength(word) + 1;
  }
  return trimToChar(Buffer.from(parts.join(' '), 'utf8'), bytes);
}

/** The first `bytes` bytes, shortened to end on a character boundary so the text stays valid. */
function trimToChar(buf: Buffer, bytes: number): Buffer {
  let end = Math.min(bytes, buf.length);
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end);
}

const ascii = ['the', 'agent', 'called', 'search', 'tool', 'with', 'query', 'results', 'were', 'returned', 'and', 'then', 'summarized.'];
const nonAscii = ['résumé', 'naïve', 'Straße', 'данные', 'агент', '日本語の', 'テキスト', '中文', '😀', 'ok', 'the', 'é'];
const dense = ['{"k":"v",', '"path":"C:\\\\dir\\\\f",', 'line\n', '\t"x"\n', 'say "hi"', 'a', 'b\r\n', '\\n'];

const datasets: { name: string; bytes: Buffer }[] = [
  { name: '64 KiB ASCII prose', bytes: textOf(ascii, 64 * KIB) },
  { name: '64 KiB non-ASCII prose', bytes: textOf(nonAscii, 64 * KIB) },
  { name: '64 KiB quotes/newlines/backslashes', bytes: textOf(dense, 64 * KIB) },
  { name: '64 KiB invalid UTF-8 (slow path)', bytes: Buffer.concat([textOf(nonAscii, 64 * KIB - 1), Buffer.from([0xff])]) },
  { name: '1 KiB ASCII prose', bytes: textOf(ascii, KIB) },
];

let sink: unknown; // keeps results alive so the work cannot be optimized away
const seconds = Number(process.argv[2] ?? 1);
const dst = new Uint8Array(6 * 64 * KIB + 2);
const rows: string[][] = [];

for (const { name, bytes } of datasets) {
  const expected = Buffer.from(JSON.stringify(bytes.toString('utf8')), 'utf8');
  if (!jsonStringBytes(bytes, 0, bytes.length).equals(expected)) throw new Error(`escaper disagrees with JSON.stringify on ${name}`);
  const cases = [
    {
      name: 'escaper: length + write into a reused buffer',
      run: () => {
        jsonStringLength(bytes, 0, bytes.length);
        sink = writeJsonString(bytes, 0, bytes.length, dst, 0);
      },
    },
    { name: 'escaper: jsonStringBytes (allocates)', run: () => (sink = jsonStringBytes(bytes, 0, bytes.length)) },
    { name: 'JSON.stringify(buf.toString()) + Buffer.from', run: () => (sink = Buffer.from(JSON.stringify(bytes.toString('utf8')), 'utf8')) },
  ];
  const rates = await measureCases(cases, seconds);
  const escapes = expected.length - 2 - bytes.length;
  cases.forEach((c, i) => {
    rows.push([name, c.name, ((rates[i]! * bytes.length) / 1e6).toFixed(0), `${(rates[i]! / rates[2]!).toFixed(2)}×`, String(escapes)]);
  });
}
void sink;

console.log(`node ${process.version}, ${seconds}s per case, best of 5 interleaved slices, MB = 10^6 input bytes`);
console.log(markdownTable(['input', 'route', 'MB/CPU-s', 'vs stringify', 'extra bytes'], rows, 2));
