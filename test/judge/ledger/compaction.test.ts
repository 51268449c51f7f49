import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, stat, truncate } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JudgeConfigSchema } from '../../../src/judge/config.ts';
import { Ledger, LEDGER_FILE, LOCK_FILE } from '../../../src/judge/ledger/ledger.ts';
import { compactionDue, compactionNeeded, LedgerBoundsSchema, roomForCall, type LedgerBounds } from '../../../src/judge/ledger/bounds.ts';
import { COMPACT_SUFFIX, COMPACTION_STEPS } from '../../../src/judge/ledger/compaction.ts';
import { READ_CHUNK_BYTES, readLedger } from '../../../src/judge/ledger/lines.ts';
import type { InputDigests, IntentRecord, LedgerKey, ResultRecord, SkipRecord } from '../../../src/judge/ledger/record.ts';

const H = (c: string) => c.repeat(64);
const keyOf = (i: number): LedgerKey => ({ point: 'trace-questions@1', runId: `run-${i}`, invocationId: `w1_${i}` });
const digests = (i: number): InputDigests => ({
  input: H((i % 10).toString()),
  state: H('a'),
  request: H('b'),
  definition: H('c'),
  windowPolicy: H('d'),
  decisionPolicy: H('e'),
  certificates: H('f'),
});
const intent = (i: number, owner: string): IntentRecord => ({
  v: 1,
  type: 'intent',
  key: keyOf(i),
  digests: digests(i),
  window: { windowId: `w1_${i}`, kind: 'event', eventMap: [{ id: 'e1', uris: [`span:t/${i}`] }] },
  requestedModel: 'm',
  owner,
  recordedAt: '2026-01-01T00:00:00.000Z',
});
const result = (i: number, owner: string): ResultRecord => ({
  v: 1,
  type: 'result',
  key: keyOf(i),
  inputDigest: digests(i).input,
  owner,
  requestedModel: 'm',
  servedModel: 'm-served',
  windowPolicyDigest: H('d'),
  failure: null,
  answers: [],
  recommendation: { action: 'record', route: null, reason: 'policy' },
  receipt: { promptTokens: i, completionTokens: null, totalTokens: null, cost: null, currency: null, attempts: 1 },
  recordedAt: '2026-01-01T00:00:00.000Z',
});
const skip = (i: number, detail = 'budget: calls-per-minute'): SkipRecord => ({
  v: 1,
  type: 'deferred',
  runId: `run-${i}`,
  revision: 1,
  windowKind: 'event',
  anchor: 't/1',
  windowId: `w1_skip_${i}`,
  triggers: ['outbound'],
  reason: 'calls-per-minute',
  detail,
  recordedAt: '2026-01-01T00:00:00.000Z',
});

const tmp = () => mkdtemp(join(tmpdir(), 'trajwatch-ledger-c-'));
const SMALL = LedgerBoundsSchema.parse({ compactAtBytes: 8192, maxBytes: 1 << 20 });

/** A ledger of `keys` answered keys, one unresolved intent, and `skips` audit lines between them; closed. */
async function writeLedger(dir: string, keys: number, skips: number): Promise<void> {
  const l = await Ledger.open(dir);
  for (let i = 0; i < keys; i++) {
    await l.appendIntent(intent(i, l.owner));
    for (let s = 0; s < skips / keys; s++) await l.appendSkip(skip(i * 100 + s));
    await l.appendResult(result(i, l.owner));
  }
  await l.appendIntent(intent(keys, l.owner)); // crashed before its result
  await l.close();
}

/** What replay gives for every key: the record itself, or the kind. */
function replayOf(l: Ledger, keys: number) {
  return Array.from({ length: keys + 1 }, (_, i) => l.lookup(keyOf(i), digests(i)));
}

const lines = async (dir: string) => (await readFile(join(dir, LEDGER_FILE), 'utf8')).split('\n').filter((x) => x !== '');

describe('ledger bounds (pure rules)', () => {
  it('compacts past compactAtBytes when it reclaims half of the larger of it and the live part, or near maxBytes when it reclaims half of compactAtBytes', () => {
    const b: LedgerBounds = { compactAtBytes: 1000, maxBytes: 4000 };
    expect(compactionDue({ bytes: 990, liveBytes: 400 }, 20, b)).toBe(true);
    expect(compactionDue({ bytes: 990, liveBytes: 600 }, 20, b)).toBe(false); // would reclaim 390 < 500
    expect(compactionDue({ bytes: 900, liveBytes: 0 }, 20, b)).toBe(false); // not over the threshold yet
    expect(compactionDue({ bytes: 3000, liveBytes: 2000 }, 20, b)).toBe(true); // reclaims 1000 ≥ 2000 / 2
    expect(compactionDue({ bytes: 3000, liveBytes: 2100 }, 20, b)).toBe(false); // 900 < 2100 / 2: not yet worth it
    expect(compactionDue({ bytes: 3990, liveBytes: 3400 }, 20, b)).toBe(true); // near full: 590 ≥ 1000 / 2
    expect(compactionDue({ bytes: 3990, liveBytes: 3600 }, 20, b)).toBe(false); // near full, 390 < 500: the audit line is refused instead
    expect(compactionNeeded({ bytes: 3990, liveBytes: 3900 }, 20, b)).toBe(true); // a replay line must fit: reclaim whatever there is
    expect(compactionNeeded({ bytes: 3990, liveBytes: 3990 }, 20, b)).toBe(false); // nothing to reclaim
    expect(roomForCall(3000, 500, 500, b)).toBe(true);
    expect(roomForCall(3000, 500, 501, b)).toBe(false);
  });

  it('are validated with the judge config: defaults embedded, compactAtBytes ≤ maxBytes, units of bytes', () => {
    expect(JudgeConfigSchema.parse({}).ledger).toEqual({ maxBytes: 256 * 1024 * 1024, compactAtBytes: 64 * 1024 * 1024 });
    const bad = JudgeConfigSchema.safeParse({ ledger: { maxBytes: 65536, compactAtBytes: 70000 } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => i.path.join('.'))).toEqual(['ledger.compactAtBytes']);
    expect(JudgeConfigSchema.safeParse({ ledger: { maxBytes: 1000 } }).success).toBe(false);
    expect(JudgeConfigSchema.safeParse({ ledger: { maxBytes: 1 << 20, extra: 1 } }).success).toBe(false);
  });
});

describe('ledger streaming open', () => {
  it('reads lines longer than one read chunk, and keeps only digests and offsets per key in memory', async () => {
    const dir = await tmp();
    const a = await Ledger.open(dir);
    await a.appendSkip(skip(1, 'x'.repeat(READ_CHUNK_BYTES + 123)));
    await a.appendIntent(intent(1, a.owner));
    await a.appendResult(result(1, a.owner));
    await a.close();
    const records = await readLedger(join(dir, LEDGER_FILE));
    expect(records.map((r) => r.type)).toEqual(['deferred', 'intent', 'result']);
    expect((records[0] as SkipRecord).detail).toHaveLength(READ_CHUNK_BYTES + 123);
    const b = await Ledger.open(dir);
    expect(b.lookup(keyOf(1), digests(1))).toEqual({ kind: 'replay', result: result(1, a.owner) });
    expect(b.stats()).toMatchObject({ keys: 1, bytes: (await stat(join(dir, LEDGER_FILE))).size });
    await b.close();
  });

  it('answers unreadable (never new, never a replay) when a recorded line cannot be read back', async () => {
    const dir = await tmp();
    const a = await Ledger.open(dir);
    await a.appendIntent(intent(1, a.owner));
    await a.appendResult(result(1, a.owner));
    await truncate(join(dir, LEDGER_FILE), 10);
    expect(a.lookup(keyOf(1), digests(1))).toMatchObject({ kind: 'unreadable' });
    await a.close();
  });
});

describe('ledger compaction', () => {
  it('keeps every intent and result line byte for byte and in order, drops the audit lines, and replays the same', async () => {
    const dir = await tmp();
    await writeLedger(dir, 6, 60);
    const before = await lines(dir);
    const control = await Ledger.open(dir);
    const expected = replayOf(control, 6);
    await control.close();
    const l = await Ledger.open(dir, { bounds: SMALL });
    expect(l.stats()).toMatchObject({ compactions: 1, keys: 7 });
    expect(replayOf(l, 6)).toEqual(expected);
    expect(l.stats().bytes).toBe(l.stats().liveBytes);
    await l.close();
    expect(await lines(dir)).toEqual(before.filter((x) => !x.includes('"type":"deferred"')));
    expect(existsSync(join(dir, LEDGER_FILE + COMPACT_SUFFIX))).toBe(false);
  });

  it('compacts while appending, and lines written after it land at the right offsets', async () => {
    const dir = await tmp();
    const l = await Ledger.open(dir, { bounds: SMALL });
    for (let i = 0; i < 40; i++) {
      await l.appendIntent(intent(i, l.owner));
      for (let s = 0; s < 5; s++) await l.appendSkip(skip(i * 10 + s));
      await l.appendResult(result(i, l.owner));
      expect(l.lookup(keyOf(i), digests(i))).toEqual({ kind: 'replay', result: result(i, l.owner) });
    }
    expect(l.stats().compactions).toBeGreaterThan(1);
    // Reclaimable lines never pile up past half of the larger of the threshold and the live part (plus the line that tipped it).
    const { bytes, liveBytes } = l.stats();
    expect(bytes - liveBytes).toBeLessThan(Math.max(SMALL.compactAtBytes, liveBytes) / 2 + 1000);
    for (let i = 0; i < 40; i++) expect(l.lookup(keyOf(i), digests(i))).toEqual({ kind: 'replay', result: result(i, l.owner) });
    await l.close();
    const again = await Ledger.open(dir);
    for (let i = 0; i < 40; i++) expect(again.lookup(keyOf(i), digests(i))).toEqual({ kind: 'replay', result: result(i, l.owner) });
    await again.close();
  });

  // A real crash: a child process opens the ledger (compaction is due at open) and SIGKILLs itself after the step.
  it.each(COMPACTION_STEPS)('a crash after %s leaves the old or the new ledger, never neither, and replay is exact', async (step) => {
    const dir = await tmp();
    await writeLedger(dir, 6, 60);
    const old = await readFile(join(dir, LEDGER_FILE), 'utf8');
    const control = await Ledger.open(dir);
    const expected = replayOf(control, 6);
    await control.close();
    const ledgerTs = resolve('src/judge/ledger/ledger.ts');
    const script = `
      const { Ledger } = await import(${JSON.stringify(ledgerTs)});
      await Ledger.open(${JSON.stringify(dir)}, {
        bounds: { compactAtBytes: 8192, maxBytes: 1048576 },
        onCompactionStep: (s) => { if (s === ${JSON.stringify(step)}) process.kill(process.pid, 'SIGKILL'); },
      });
      process.exit(3); // compaction did not reach the step
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.signal, child.stderr).toBe('SIGKILL');
    const now = await readFile(join(dir, LEDGER_FILE), 'utf8');
    const compacted = old
      .split('\n')
      .filter((x) => x !== '' && !x.includes('"type":"deferred"'))
      .map((x) => x + '\n')
      .join('');
    expect([old, compacted]).toContain(now);
    expect(now === old).toBe(step === 'temp-written' || step === 'temp-synced');
    expect(existsSync(join(dir, LEDGER_FILE + COMPACT_SUFFIX))).toBe(step === 'temp-written' || step === 'temp-synced');
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true); // the dead child's
    const l = await Ledger.open(dir);
    expect(l.tookOverDeadLock).toBe(true);
    expect(replayOf(l, 6)).toEqual(expected);
    await l.close();
    expect(existsSync(join(dir, LEDGER_FILE + COMPACT_SUFFIX))).toBe(false);
  });

  it('keeps the old ledger in use when compaction fails before its rename, and says so', async () => {
    const dir = await tmp();
    await writeLedger(dir, 3, 30);
    const old = await readFile(join(dir, LEDGER_FILE), 'utf8');
    const faults: unknown[] = [];
    const l = await Ledger.open(dir, {
      bounds: SMALL,
      onFault: (e) => faults.push(e),
      onCompactionStep: (s) => {
        if (s === 'temp-synced') throw new Error('no space left on device');
      },
    });
    expect(faults).toHaveLength(1);
    expect(l.stats().compactions).toBe(0);
    expect(await readFile(join(dir, LEDGER_FILE), 'utf8')).toBe(old);
    expect(existsSync(join(dir, LEDGER_FILE + COMPACT_SUFFIX))).toBe(false);
    await l.appendIntent(intent(9, l.owner));
    await l.appendResult(result(9, l.owner));
    expect(l.lookup(keyOf(9), digests(9))).toEqual({ kind: 'replay', result: result(9, l.owner) });
    await l.close();
  });
});

describe('ledger compaction failing after its rename', () => {
  it('stops accepting writes (the file in use is not known durable) but still replays what it holds', async () => {
    const dir = await tmp();
    await writeLedger(dir, 3, 30);
    const control = await Ledger.open(dir);
    const expected = replayOf(control, 3);
    await control.close();
    const faults: unknown[] = [];
    const l = await Ledger.open(dir, {
      bounds: SMALL,
      onFault: (e) => faults.push(e),
      onCompactionStep: (s) => {
        if (s === 'renamed') throw new Error('EIO on the directory');
      },
    });
    expect(faults).toHaveLength(1);
    await expect(l.appendIntent(intent(9, l.owner))).rejects.toThrow(/compacted but could not be reopened/);
    expect(replayOf(l, 3)).toEqual(expected);
    await l.close();
  });
});

describe('ledger full', () => {
  it('refuses room for a call once what replay needs and the reservations fill maxBytes, never deletes a replay line, and drops audit lines past maxBytes with a count', async () => {
    const dir = await tmp();
    // compactAtBytes = maxBytes: near full, what could be reclaimed is less than half of it, so audit lines are refused.
    const bounds = LedgerBoundsSchema.parse({ compactAtBytes: 65536, maxBytes: 65536 });
    const l = await Ledger.open(dir, { bounds });
    let admitted = 0;
    for (let i = 0; i < 100 && l.reserve(keyOf(i), 1000); i++) {
      admitted++;
      await l.appendIntent(intent(i, l.owner));
      await l.appendResult(result(i, l.owner));
    }
    expect(admitted).toBeGreaterThan(20);
    expect(admitted).toBeLessThan(100);
    expect(l.reserve(keyOf(1000), 1000)).toBe(false);
    for (let s = 0; s < 200; s++) await l.appendSkip(skip(s));
    const st = l.stats();
    expect(st.skipsNotRecorded).toBeGreaterThan(0);
    expect(st.bytes).toBeLessThanOrEqual(bounds.maxBytes);
    expect((await stat(join(dir, LEDGER_FILE))).size).toBe(st.bytes);
    await l.close();
    const again = await Ledger.open(dir, { bounds });
    for (let i = 0; i < admitted; i++) expect(again.lookup(keyOf(i), digests(i))).toEqual({ kind: 'replay', result: result(i, l.owner) });
    await again.close();
  });

  it('gives a reservation back when released, so a deferred call does not hold room', async () => {
    const dir = await tmp();
    const l = await Ledger.open(dir, { bounds: LedgerBoundsSchema.parse({ compactAtBytes: 4096, maxBytes: 65536 }) });
    let n = 0;
    while (l.reserve(keyOf(n), 1000)) n++;
    expect(n).toBeGreaterThan(0);
    expect(l.reserve(keyOf(n), 1000)).toBe(false);
    l.release(keyOf(0));
    expect(l.reserve(keyOf(n), 1000)).toBe(true);
    await l.close();
  });
});

describe('ledger reservations', () => {
  it('holds one reservation per admitted call, even two under one key, and gives back one at a time', async () => {
    const dir = await tmp();
    const l = await Ledger.open(dir, { bounds: LedgerBoundsSchema.parse({ compactAtBytes: 4096, maxBytes: 65536 }) });
    const perCall = 1000 + 16 * 1024;
    const fit = Math.floor(65536 / perCall);
    for (let i = 0; i < fit; i++) expect(l.reserve(keyOf(0), 1000)).toBe(true);
    expect(l.reserve(keyOf(1), 1000)).toBe(false);
    l.release(keyOf(0));
    expect(l.reserve(keyOf(1), 1000)).toBe(true);
    expect(l.reserve(keyOf(2), 1000)).toBe(false);
    await l.close();
  });
});
