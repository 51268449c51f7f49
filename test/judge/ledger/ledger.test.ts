import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StorageError } from '../../../src/errors.ts';
import { Ledger, LEDGER_FILE, LOCK_FILE } from '../../../src/judge/ledger/ledger.ts';
import type { InputDigests, IntentRecord, ResultRecord } from '../../../src/judge/ledger/record.ts';

const H = (c: string) => c.repeat(64);
const key = { point: 'trace-questions@1', runId: 'session-1', invocationId: 'w1_abc' };
const digests = (state = 'a'): InputDigests => ({
  input: H(state === 'a' ? '1' : '2'),
  state: H(state),
  request: H('b'),
  definition: H('c'),
  windowPolicy: H('d'),
  decisionPolicy: H('e'),
  certificates: H('f'),
});

function intent(owner: string, d = digests()): IntentRecord {
  return {
    v: 1,
    type: 'intent',
    key,
    digests: d,
    window: { windowId: 'w1_abc', kind: 'event', eventMap: [{ id: 'e1', uris: ['span:x/y'] }] },
    requestedModel: 'm',
    owner,
    recordedAt: 't',
  };
}

function result(owner: string): ResultRecord {
  return {
    v: 1,
    type: 'result',
    key,
    inputDigest: H('1'),
    owner,
    requestedModel: 'm',
    servedModel: 'm-served',
    windowPolicyDigest: H('d'),
    failure: null,
    answers: [],
    recommendation: { action: 'record', route: null, reason: 'policy' },
    receipt: { promptTokens: 5, completionTokens: null, totalTokens: null, cost: null, currency: null, attempts: 1 },
    recordedAt: 't',
  };
}

const tmp = () => mkdtemp(join(tmpdir(), 'trajwatch-ledger-'));

describe('ledger', () => {
  it('replays an exact key with its result, across a restart (re-open)', async () => {
    const dir = await tmp();
    const a = await Ledger.open(dir);
    expect(a.lookup(key, digests())).toEqual({ kind: 'new' });
    await a.appendIntent(intent(a.owner));
    expect(a.lookup(key, digests())).toEqual({ kind: 'in-flight' });
    await a.appendResult(result(a.owner));
    expect(a.lookup(key, digests())).toMatchObject({ kind: 'replay', result: { servedModel: 'm-served' } });
    await a.close();
    const b = await Ledger.open(dir);
    const found = b.lookup(key, digests());
    expect(found.kind).toBe('replay');
    // Missing usage stays null across the round trip, never 0.
    expect(found.kind === 'replay' && found.result.receipt.completionTokens).toBeNull();
    await b.close();
  });

  it('reports a conflict, naming what changed, when the same key comes with changed inputs', async () => {
    const dir = await tmp();
    const a = await Ledger.open(dir);
    await a.appendIntent(intent(a.owner));
    await a.appendResult(result(a.owner));
    await a.close();
    const b = await Ledger.open(dir);
    expect(b.lookup(key, digests('z'))).toEqual({ kind: 'conflict', changed: ['state'] });
    await b.close();
  });

  it('opens a ledger written before the evaluator was bound, and names the evaluator as changed for its keys', async () => {
    // These records have neither digests.evaluator nor the result's bindings nor receipt.perAttempt.
    const dir = await tmp();
    const a = await Ledger.open(dir);
    await a.appendIntent(intent(a.owner));
    await a.appendResult(result(a.owner));
    await a.close();
    const b = await Ledger.open(dir);
    expect(b.lookup(key, { ...digests(), input: H('9'), evaluator: H('7') })).toEqual({ kind: 'conflict', changed: ['evaluator'] });
    await b.close();
  });

  it('keeps an intent without a result explicit after a restart, never as new', async () => {
    const dir = await tmp();
    const a = await Ledger.open(dir);
    await a.appendIntent(intent(a.owner));
    await a.close(); // crashed between intent and result
    const b = await Ledger.open(dir);
    expect(b.lookup(key, digests())).toMatchObject({ kind: 'unresolved-intent', intent: { owner: a.owner } });
    await b.close();
  });

  it('fsyncs line by line: every record is on disk as one JSON line', async () => {
    const dir = await tmp();
    const a = await Ledger.open(dir);
    await a.appendIntent(intent(a.owner));
    await a.appendResult(result(a.owner));
    const lines = (await readFile(join(dir, LEDGER_FILE), 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['intent', 'result']);
    await a.close();
  });

  it.each([
    ['a line that is not JSON', '{"v":1,"type":"intent"\n'],
    ['a torn last line', '{"v":1,'],
    ['a record of unknown shape', '{"v":1,"type":"result","key":{}}\n'],
  ])('refuses to open a corrupt ledger (%s) with a clear message, and leaves the file as it was', async (_name, junk) => {
    const dir = await tmp();
    const a = await Ledger.open(dir);
    await a.appendIntent(intent(a.owner));
    await a.close();
    await appendFile(join(dir, LEDGER_FILE), junk);
    const before = await readFile(join(dir, LEDGER_FILE), 'utf8');
    const err = await Ledger.open(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as Error).message).toMatch(/is corrupt at line 2: .*will not reset it/);
    expect(await readFile(join(dir, LEDGER_FILE), 'utf8')).toBe(before);
  });

  it('refuses a result whose intent is missing (records out of order)', async () => {
    const dir = await tmp();
    await writeFile(join(dir, LEDGER_FILE), JSON.stringify(result('o')) + '\n');
    await expect(Ledger.open(dir)).rejects.toThrow(/out of order/);
  });

  it('allows one writer: a live owner keeps the lock, a dead owner is taken over', async () => {
    const dir = await tmp();
    const a = await Ledger.open(dir);
    await expect(Ledger.open(dir)).rejects.toThrow(/locked by a running process \(pid \d+\)/);
    await a.close();
    // A process that has exited: its pid is not alive.
    const dead = spawnSync(process.execPath, ['-e', 'process.exit(0)']).pid!;
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: dead, owner: 'gone' }));
    const b = await Ledger.open(dir);
    expect(b.tookOverDeadLock).toBe(true);
    await b.close();
  });
});
