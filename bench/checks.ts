/**
 * Checks benchmark: the cost of `runChecks` over the 26 TRAIL trajectories, next to the cost of
 * decoding (OTLP/JSON) and normalizing the same traces, so the checks' share is visible.
 *
 * Run: npx node bench/checks.ts [secondsPerCase]
 */
import { defaultChecksConfig } from '../src/checks/config.ts';
import { runChecks } from '../src/checks/run-checks.ts';
import { DecodeError } from '../src/errors.ts';
import { decodeOtlpJson } from '../src/ingest/otlp-json-decode.ts';
import { normalizeSpan } from '../src/normalize/normalize.ts';
import { loadTrailTraces, trailOtlpText } from '../test/checks/trail-trajectories.ts';

const secondsPerCase = Number(process.argv[2] ?? 2);

/** Runs `fn` repeatedly for about `seconds` after a warm-up; returns milliseconds per call. */
function measure(fn: () => void, seconds: number): number {
  for (let i = 0; i < 20; i++) fn();
  let calls = 0;
  const start = process.hrtime.bigint();
  const budget = BigInt(Math.round(seconds * 1e9));
  let elapsed = 0n;
  while (elapsed < budget) {
    fn();
    calls++;
    elapsed = process.hrtime.bigint() - start;
  }
  return Number(elapsed) / 1e6 / calls;
}

const traces = loadTrailTraces();
const texts = traces.map((t) => trailOtlpText(t.traceId));
const trajectories = traces.map((t) => t.trajectory);
const spanCount = trajectories.reduce((n, t) => n + t.steps.length, 0);
let sink = 0;

const decodeMs = measure(() => {
  for (const text of texts) {
    const decoded = decodeOtlpJson(text);
    if (decoded instanceof DecodeError) throw decoded;
    sink += decoded.spans.length;
  }
}, secondsPerCase);

const normalizeSpans = texts.map((text) => {
  const decoded = decodeOtlpJson(text);
  if (decoded instanceof DecodeError) throw decoded;
  return decoded.spans;
});
const normalizeMs = measure(() => {
  for (const spans of normalizeSpans) for (const span of spans) sink += normalizeSpan(span).encodedBytes;
}, secondsPerCase);

const checksMs = measure(() => {
  for (const t of trajectories) sink += runChecks(t, defaultChecksConfig).l0.length;
}, secondsPerCase);

const row = (name: string, ms: number) =>
  `| ${name} | ${ms.toFixed(3)} | ${((ms * 1000) / spanCount).toFixed(2)} | ${Math.round((spanCount / ms) * 1000).toLocaleString('en-US')} |`;
console.log(`TRAIL dev set: ${trajectories.length} trajectories, ${spanCount} spans; node ${process.version}; ${secondsPerCase}s per case`);
console.log('');
console.log('| stage | ms per pass over all 26 | µs per span | spans/s |');
console.log('|---|---|---|---|');
console.log(row('decode OTLP/JSON', decodeMs));
console.log(row('normalize', normalizeMs));
console.log(row('runChecks', checksMs));
console.log('');
console.log(`runChecks is ${((checksMs / decodeMs) * 100).toFixed(1)}% of JSON decoding time.`);
// The running sum keeps the measured work observable, so none of it is optimized away.
if (sink === 0) console.log('warning: nothing was measured');
