// Measures opening (and compacting) a large judge ledger: time, heap kept per key, peak heap.
// Not a test (no timed assertion): the figures in docs/decision-points.md come from it.
//
//   node --expose-gc test/judge/ledger/measure-ledger-open.ts <keys> [auditLinesPerKey] [compactAtBytes]
//
// The ledger is synthetic but made of real-shaped lines: an intent with a five-event map and a
// result with eight answers (4.3 KiB per answered key), plus `auditLinesPerKey` deferred lines.
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger, LEDGER_FILE } from '../../../src/judge/ledger/ledger.ts';
import { SEMANTIC_QUESTIONS } from '../../../src/judge/questions.ts';

const [keys = 20_000, audit = 0, compactAt = 2 ** 40] = process.argv.slice(2).map(Number);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

const hex = (i: number, c: string) => (i.toString(16).padStart(8, '0') + c).repeat(8).slice(0, 64);

function lines(i: number): string {
  const key = { point: 'trace-questions@1', runId: `run-${i}`, invocationId: `w1_${i.toString(16).padStart(24, '0')}` };
  const d = {
    input: hex(i, 'a'),
    state: hex(i, 'b'),
    request: hex(1, 'c'),
    definition: hex(2, 'd'),
    windowPolicy: hex(3, 'e'),
    evaluator: hex(4, 'f'),
    decisionPolicy: hex(5, '1'),
    certificates: hex(6, '2'),
  };
  const owner = '9a797d95-cdad-47f5-9a16-31c720c276f0';
  const at = '2026-01-01T00:00:00.000Z';
  const eventMap = Array.from({ length: 5 }, (_, e) => ({ id: `e${e + 1}`, uris: [`span:${'ab'.repeat(16)}/${String(e + 1).padStart(16, '0')}`] }));
  const answers = SEMANTIC_QUESTIONS.map((q, n) => ({
    questionId: q.id,
    questionVersion: q.version,
    option: n === 0 ? 'yes' : 'no',
    probabilities: { yes: 0.97, no: 0.030000000000000023 },
    unseenBound: 0,
    support: n === 0 ? 'e1' : 'unresolved',
    recommendation: { action: 'record', route: null, reason: 'policy' },
    certificateId: null,
  }));
  const attempt = { outcome: 'answered', status: 200, promptTokens: 900, completionTokens: 60, totalTokens: 960, cost: null, currency: null };
  const out = [
    { v: 1, type: 'intent', key, digests: d, window: { windowId: key.invocationId, kind: 'event', eventMap }, requestedModel: 'judge', owner, recordedAt: at },
    {
      v: 1,
      type: 'result',
      key,
      inputDigest: d.input,
      owner,
      requestedModel: 'judge',
      servedModel: 'judge-model-2025-01',
      windowPolicyDigest: d.windowPolicy,
      windowKind: 'event',
      requestContractDigest: hex(7, '3'),
      evaluatorDigest: d.evaluator,
      failure: null,
      answers,
      recommendation: { action: 'record', route: null, reason: 'policy' },
      receipt: { promptTokens: 900, completionTokens: 60, totalTokens: 960, cost: null, currency: null, attempts: 1, perAttempt: [attempt] },
      recordedAt: at,
    },
  ];
  for (let s = 0; s < audit; s++) {
    out.push({
      v: 1,
      type: 'deferred',
      runId: key.runId,
      revision: 1,
      windowKind: 'event',
      anchor: `${'ab'.repeat(16)}/${'0'.repeat(15)}${s % 10}`,
      windowId: `w1_${s}`,
      triggers: ['outbound'],
      reason: 'calls-per-minute',
      detail: 'budget: calls-per-minute',
      recordedAt: at,
    } as never);
  }
  return out.map((r) => JSON.stringify(r) + '\n').join('');
}

const dir = await mkdtemp(join(tmpdir(), 'trajwatch-ledger-measure-'));
const path = join(dir, LEDGER_FILE);
await writeFile(path, Array.from({ length: keys }, (_, i) => lines(i)).join(''));
const fileBytes = (await stat(path)).size;
gc();
const base = process.memoryUsage().heapUsed;
let peak = base;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
const started = performance.now();
const ledger = await Ledger.open(dir, { bounds: { maxBytes: 2 ** 40, compactAtBytes: compactAt } });
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
gc();
const kept = process.memoryUsage().heapUsed - base;
const MiB = (n: number) => +(n / 2 ** 20).toFixed(1);
console.log(
  JSON.stringify({
    keys,
    auditLinesPerKey: audit,
    fileMiB: MiB(fileBytes),
    openSeconds: +seconds.toFixed(2),
    heapKeptPerKeyBytes: Math.round(kept / keys),
    peakHeapOverBaseMiB: MiB(Math.max(peak, base + kept) - base),
    afterOpen: { ...ledger.stats(), fileMiB: MiB(ledger.stats().bytes) },
  }),
);
await ledger.close();
await rm(dir, { recursive: true, force: true });
