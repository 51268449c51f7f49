import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Ledger, LEDGER_FILE } from '../../../src/judge/ledger/ledger.ts';
import type { LedgerBounds } from '../../../src/judge/ledger/bounds.ts';
import type { InputDigests, IntentRecord, LedgerKey, ResultRecord, SkipRecord } from '../../../src/judge/ledger/record.ts';

const H = (c: string) => c.repeat(64);
const keyOf = (i: number): LedgerKey => ({ point: 'trace-questions@1', runId: `run-${i}`, invocationId: `w1_${i}` });
const digests = (i: number): InputDigests => ({
  input: H((i % 16).toString(16)),
  state: H('a'),
  request: H('b'),
  definition: H('c'),
  windowPolicy: H('d'),
  decisionPolicy: H('e'),
  certificates: H('f'),
});

type Op = { kind: 'intent' } | { kind: 'result' } | { kind: 'skip'; bytes: number } | { kind: 'reopen' };

/** What the ledger should answer for each key: the result it holds, or none yet, and who wrote the intent. */
interface Model {
  owner: Map<number, string>;
  result: Map<number, ResultRecord>;
}

function intent(i: number, owner: string): IntentRecord {
  return {
    v: 1,
    type: 'intent',
    key: keyOf(i),
    digests: digests(i),
    window: { windowId: `w1_${i}`, kind: 'turn', eventMap: [] },
    requestedModel: 'm',
    owner,
    recordedAt: 't',
  };
}

function result(i: number, owner: string): ResultRecord {
  return {
    v: 1,
    type: 'result',
    key: keyOf(i),
    inputDigest: digests(i).input,
    owner,
    requestedModel: 'm',
    servedModel: `served-${i}`,
    windowPolicyDigest: H('d'),
    failure: i % 3 === 0 ? { kind: 'timeout', message: 'no answer' } : null,
    answers: [],
    recommendation: { action: 'escalate', route: null, reason: 'a question escalated' },
    receipt: { promptTokens: i, completionTokens: null, totalTokens: null, cost: null, currency: null, attempts: 1 },
    recordedAt: 't',
  };
}

const skip = (n: number, bytes: number): SkipRecord => ({
  v: 1,
  type: 'deferred',
  runId: `s-${n}`,
  revision: 1,
  windowKind: 'event',
  anchor: 'a/b',
  windowId: null,
  triggers: [],
  reason: 'queue-full',
  detail: 'd'.repeat(bytes),
  recordedAt: 't',
});

function expectAgrees(l: Ledger, m: Model): void {
  for (const [i, owner] of m.owner) {
    const found = l.lookup(keyOf(i), digests(i));
    const recorded = m.result.get(i);
    if (recorded !== undefined) expect(found).toEqual({ kind: 'replay', result: recorded });
    else expect(found.kind).toBe(owner === l.owner ? 'in-flight' : 'unresolved-intent');
  }
}

describe('ledger under compaction (property)', () => {
  it('answers every key as a model map does, across appends, compactions and reopens, and keeps its size accounting true', async () => {
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 3, arbitrary: fc.constant({ kind: 'intent' as const }) },
      { weight: 3, arbitrary: fc.constant({ kind: 'result' as const }) },
      { weight: 6, arbitrary: fc.record({ kind: fc.constant('skip' as const), bytes: fc.integer({ min: 0, max: 3000 }) }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
    );
    let compactions = 0;
    let notRecorded = 0;
    await fc.assert(
      // Bounds below the config's minimums, straight to the ledger, so short runs reach them.
      fc.asyncProperty(
        fc.array(op, { maxLength: 80 }),
        fc.integer({ min: 2048, max: 16384 }),
        fc.integer({ min: 0, max: 16384 }),
        async (ops, compactAtBytes, extra) => {
          const bounds: LedgerBounds = { compactAtBytes, maxBytes: compactAtBytes + extra };
          const dir = await mkdtemp(join(tmpdir(), 'trajwatch-ledger-p-'));
          const m: Model = { owner: new Map(), result: new Map() };
          let l = await Ledger.open(dir, { bounds });
          let next = 0;
          let skips = 0;
          const open: number[] = [];
          for (const o of ops) {
            if (o.kind === 'intent') {
              const i = next++;
              await l.appendIntent(intent(i, l.owner));
              m.owner.set(i, l.owner);
              open.push(i);
            } else if (o.kind === 'result') {
              // A result only for an intent of this process (as DecisionPoints writes them).
              const at = open.findIndex((i) => m.owner.get(i) === l.owner);
              if (at < 0) continue;
              const [i] = open.splice(at, 1);
              const r = result(i!, l.owner);
              await l.appendResult(r);
              m.result.set(i!, r);
            } else if (o.kind === 'skip') {
              await l.appendSkip(skip(skips++, o.bytes));
            } else {
              compactions += l.stats().compactions;
              notRecorded += l.stats().skipsNotRecorded;
              await l.close();
              l = await Ledger.open(dir, { bounds });
            }
            expectAgrees(l, m);
            const s = l.stats();
            expect(s.bytes).toBe((await stat(join(dir, LEDGER_FILE)).catch(() => ({ size: 0 }))).size);
            expect(s.keys).toBe(m.owner.size);
          }
          compactions += l.stats().compactions;
          notRecorded += l.stats().skipsNotRecorded;
          await l.close();
          // Whatever compacted, the replay lines are all there, in the order written.
          const text = await readFile(join(dir, LEDGER_FILE), 'utf8').catch(() => '');
          const kept = text.split('\n').filter((x) => x !== '' && !x.includes('"type":"deferred"'));
          expect(kept.length).toBe(m.owner.size + m.result.size);
          const after = await Ledger.open(dir);
          expect(after.stats().liveBytes).toBe(kept.reduce((n, x) => n + Buffer.byteLength(x) + 1, 0));
          expectAgrees(after, m);
          await after.close();
        },
      ),
      {
        numRuns: 40,
        // Two of the runs (fast-check runs examples first, within numRuns) always reach both
        // bounds, so the coverage checked below never depends on what the random runs drew:
        // audit lines pushing the ledger past compactAtBytes with room left (it compacts), and
        // audit lines too large for a ledger with no room beyond it (they are not recorded).
        examples: [
          [[{ kind: 'intent' }, { kind: 'result' }, ...Array.from({ length: 6 }, () => ({ kind: 'skip' as const, bytes: 1000 }))], 2048, 16384],
          [[{ kind: 'intent' }, ...Array.from({ length: 3 }, () => ({ kind: 'skip' as const, bytes: 3000 }))], 2048, 0],
        ],
      },
    );
    // The runs did exercise compaction, and the full ledger's refusal of audit lines.
    expect(compactions).toBeGreaterThan(0);
    expect(notRecorded).toBeGreaterThan(0);
  }, 60_000);
});
