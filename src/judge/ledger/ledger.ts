import { randomUUID } from 'node:crypto';
import { readSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageError } from '../../errors.ts';
import { canonicalJson } from '../../core/canonical-json.ts';
import { PRIVATE_DIR_MODE } from '../../core/private-files.ts';
import { compactionDue, compactionNeeded, LedgerBoundsSchema, RESULT_RESERVE_BYTES, roomForCall, type LedgerBounds } from './bounds.ts';
import { compactLedger, removeStaleCompaction, type CompactionStep, type Span } from './compaction.ts';
import { acquireLock, releaseLock } from './lock.ts';
import { ledgerLines } from './lines.ts';
import {
  IntentRecordSchema,
  ResultRecordSchema,
  type InputDigests,
  type IntentRecord,
  type LedgerKey,
  type LedgerRecord,
  type ResultRecord,
  type SkipRecord,
} from './record.ts';
import type { LedgerStats } from '../judge-stats.ts';

export { readLedger } from './lines.ts';

export const LEDGER_FILE = 'ledger.jsonl';
export const LOCK_FILE = 'ledger.lock';

/** What the ledger already knows about a key. */
export type Lookup =
  | { kind: 'new' }
  | { kind: 'replay'; result: ResultRecord }
  | { kind: 'conflict'; changed: string[] }
  /** An earlier process wrote the intent and never the result: possibly paid, never re-paid silently. */
  | { kind: 'unresolved-intent'; intent: IntentRecord }
  /** This process is judging it right now. */
  | { kind: 'in-flight' }
  /** The key's recorded line could not be read back: nothing may be paid again, nothing replayed. */
  | { kind: 'unreadable'; message: string };

/**
 * One key of the in-memory index. A record is held in memory only while its line is being
 * written; then only where its line is. So a key costs its digests (eight 64-hex strings),
 * its owner, the key string and two spans — about 1.2 KiB of heap, measured by
 * test/judge/ledger/measure-ledger-open.ts — whatever its records' size.
 */
interface Entry {
  digests: InputDigests;
  owner: string;
  intent: IntentRecord | Span;
  result?: ResultRecord | Span;
}

export interface LedgerOptions {
  /** `judge.ledger`; defaults apply otherwise. */
  bounds?: LedgerBounds;
  /** Told of a compaction that failed (the ledger as it was stays in use). Must not throw. */
  onFault?: (err: unknown) => void;
  /** Told after each compaction step; for tests that stop there as a crash would. */
  onCompactionStep?: (step: CompactionStep) => void | Promise<void>;
}

export function keyString(k: LedgerKey): string {
  return canonicalJson([k.point, k.runId, k.invocationId]);
}

const isSpan = (held: object): held is Span => 'offset' in held;

/**
 * The durable decision ledger: append-only JSONL, every line fsync'd before its promise
 * resolves, one writer at a time (a lock file naming the owner's pid; a dead owner's lock is
 * taken over). Opening streams and validates every line: a corrupt ledger refuses to open with
 * the line and the problem, and is never reset.
 *
 * Bounded (`LedgerBounds`): audit lines are compacted away when the file passes
 * `compactAtBytes`; what replay needs is never deleted, so when it fills `maxBytes` new calls
 * are refused room (`reserve`) and the caller defers them.
 */
export class Ledger {
  readonly path: string;
  readonly owner: string;
  /** Whether opening took over a lock left by a dead process. */
  readonly tookOverDeadLock: boolean;
  readonly #lockPath: string;
  readonly #bounds: LedgerBounds;
  readonly #options: LedgerOptions;
  readonly #entries: Map<string, Entry>;
  #fh: FileHandle;
  /** Read side of the same file: replays read their line back by offset. */
  #rfh: FileHandle;
  #bytes: number;
  #liveBytes: number;
  /** Per key, the reservations of calls admitted and not yet recorded (a revision closed twice before dispatch holds two). */
  readonly #reserved = new Map<string, number[]>();
  #reservedBytes = 0;
  #compactions = 0;
  #skipsNotRecorded = 0;
  #tail: Promise<unknown> = Promise.resolve();
  #failure: Error | undefined;
  #closed = false;

  private constructor(
    path: string,
    lockPath: string,
    fh: FileHandle,
    rfh: FileHandle,
    indexed: Indexed,
    owner: string,
    tookOver: boolean,
    options: LedgerOptions,
  ) {
    this.path = path;
    this.#lockPath = lockPath;
    this.#fh = fh;
    this.#rfh = rfh;
    this.#entries = indexed.entries;
    this.#bytes = indexed.bytes;
    this.#liveBytes = indexed.liveBytes;
    this.owner = owner;
    this.tookOverDeadLock = tookOver;
    this.#options = options;
    this.#bounds = options.bounds ?? LedgerBoundsSchema.parse({});
  }

  static async open(dir: string, options: LedgerOptions = {}): Promise<Ledger> {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const owner = randomUUID();
    const lockPath = join(dir, LOCK_FILE);
    const tookOver = await acquireLock(lockPath, owner);
    const path = join(dir, LEDGER_FILE);
    try {
      // A compaction that crashed before its rename left only a temporary file: the ledger beside it is whole.
      await removeStaleCompaction(path);
      const indexed = await index(path);
      const fh = await open(path, 'a');
      const rfh = await open(path, 'r');
      const ledger = new Ledger(path, lockPath, fh, rfh, indexed, owner, tookOver, options);
      if (compactionDue(ledger.#size(), 0, ledger.#bounds)) await ledger.#compact();
      return ledger;
    } catch (err) {
      await releaseLock(lockPath);
      throw err;
    }
  }

  /** The entry for a key, judged against the digests of the invocation about to be made. */
  lookup(key: LedgerKey, digests: InputDigests): Lookup {
    const entry = this.#entries.get(keyString(key));
    if (entry === undefined) return { kind: 'new' };
    if (entry.digests.input !== digests.input) {
      const was = entry.digests as Record<string, string>;
      const now = digests as Record<string, string>;
      return { kind: 'conflict', changed: Object.keys(now).filter((k) => k !== 'input' && was[k] !== now[k]) };
    }
    try {
      if (entry.result !== undefined) return { kind: 'replay', result: isSpan(entry.result) ? this.#read(entry.result, ResultRecordSchema) : entry.result };
      if (entry.owner === this.owner) return { kind: 'in-flight' };
      return { kind: 'unresolved-intent', intent: isSpan(entry.intent) ? this.#read(entry.intent, IntentRecordSchema) : entry.intent };
    } catch (err) {
      return { kind: 'unreadable', message: (err as Error).message };
    }
  }

  /**
   * Room for a new call under `maxBytes`: its intent line (`intentBytes`) and a result reserve
   * beside the lines replay needs and the calls already reserved. True reserves it (released
   * when its result is written, or by `release`); false: the ledger is full for new calls.
   */
  reserve(key: LedgerKey, intentBytes: number): boolean {
    const bytes = intentBytes + RESULT_RESERVE_BYTES;
    if (!roomForCall(this.#liveBytes, this.#reservedBytes, bytes, this.#bounds)) return false;
    const k = keyString(key);
    this.#reserved.set(k, [...(this.#reserved.get(k) ?? []), bytes]);
    this.#reservedBytes += bytes;
    return true;
  }

  /** Gives back one reservation of `key`: its result was written, or its call will not be made. */
  release(key: LedgerKey): void {
    const k = keyString(key);
    const held = this.#reserved.get(k);
    if (held === undefined) return;
    this.#reservedBytes -= held.pop() ?? 0;
    if (held.length === 0) this.#reserved.delete(k);
  }

  /** Durable before it resolves: inference may start only after this. */
  async appendIntent(record: IntentRecord): Promise<void> {
    const k = keyString(record.key);
    if (this.#entries.has(k)) throw new StorageError(`ledger already holds an intent for ${k}`);
    const entry: Entry = { digests: record.digests, owner: record.owner, intent: record };
    this.#entries.set(k, entry);
    await this.#append(record, (span) => (entry.intent = span));
  }

  async appendResult(record: ResultRecord): Promise<void> {
    const entry = this.#entries.get(keyString(record.key));
    if (entry === undefined || entry.result !== undefined) throw new StorageError(`no open intent for ${keyString(record.key)}`);
    entry.result = record;
    this.release(record.key);
    await this.#append(record, (span) => (entry.result = span));
  }

  /** An audit line; false when it was not written because the ledger is full (counted in `stats().skipsNotRecorded`). */
  async appendSkip(record: SkipRecord): Promise<boolean> {
    return this.#append(record);
  }

  stats(): LedgerStats {
    return {
      bytes: this.#bytes,
      liveBytes: this.#liveBytes,
      keys: this.#entries.size,
      compactions: this.#compactions,
      skipsNotRecorded: this.#skipsNotRecorded,
    };
  }

  get bounds(): LedgerBounds {
    return this.#bounds;
  }

  /** Waits for pending appends, closes the file and releases the lock. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail.catch(() => undefined);
    await this.#fh.close();
    await this.#rfh.close();
    await releaseLock(this.#lockPath);
  }

  #size() {
    return { bytes: this.#bytes, liveBytes: this.#liveBytes };
  }

  #append(record: LedgerRecord, written?: (span: Span) => void): Promise<boolean> {
    const line = JSON.stringify(record) + '\n';
    const need = Buffer.byteLength(line);
    const live = record.type === 'intent' || record.type === 'result';
    const write = async (): Promise<boolean> => {
      if (this.#failure !== undefined) throw this.#failure;
      if (this.#closed) throw new StorageError('ledger is closed');
      if (compactionDue(this.#size(), need, this.#bounds) || (live && compactionNeeded(this.#size(), need, this.#bounds))) await this.#compact();
      if (this.#failure !== undefined) throw this.#failure;
      if (!live && this.#bytes + need > this.#bounds.maxBytes) {
        this.#skipsNotRecorded++;
        return false;
      }
      try {
        await this.#fh.write(line);
        await this.#fh.sync();
      } catch (err) {
        this.#failure = new StorageError(`ledger ${this.path} could not be written`, { cause: err });
        throw this.#failure;
      }
      const span = { offset: this.#bytes, bytes: need };
      this.#bytes += need;
      if (live) this.#liveBytes += need;
      written?.(span);
      return true;
    };
    const p = this.#tail.then(write);
    this.#tail = p.catch(() => undefined);
    return p;
  }

  /**
   * Rewrites the file with only what replay needs (see `compactLedger`), inside the append
   * chain: nothing is written meanwhile. A failure before the rename keeps the old file in
   * use; after it the file in use is unknown to be durable, so the ledger stops accepting
   * writes as it does after a failed write.
   */
  async #compact(): Promise<void> {
    let renamed = false;
    try {
      const c = await compactLedger(this.path, keyString as (k: unknown) => string, async (step) => {
        if (step === 'renamed') renamed = true;
        await this.#options.onCompactionStep?.(step);
      });
      // Every line the index points at must have moved; check them all before changing any.
      const moves: [Entry, Span | undefined, Span | undefined][] = [];
      for (const [k, entry] of this.#entries) {
        const moved = c.spans.get(k);
        const intent = isSpan(entry.intent) ? expectSpan(moved?.intent, k) : undefined;
        const result = entry.result !== undefined && isSpan(entry.result) ? expectSpan(moved?.result, k) : undefined;
        moves.push([entry, intent, result]);
      }
      const fh = await open(this.path, 'a');
      const rfh = await open(this.path, 'r');
      const [oldFh, oldRfh] = [this.#fh, this.#rfh];
      // One synchronous swap: a lookup sees the old file with its offsets or the new one with its own.
      for (const [entry, intent, result] of moves) {
        if (intent !== undefined) entry.intent = intent;
        if (result !== undefined) entry.result = result;
      }
      this.#fh = fh;
      this.#rfh = rfh;
      this.#bytes = c.bytes;
      this.#liveBytes = c.bytes;
      this.#compactions++;
      await oldFh.close().catch(() => undefined);
      await oldRfh.close().catch(() => undefined);
    } catch (err) {
      if (renamed) this.#failure = new StorageError(`ledger ${this.path} was compacted but could not be reopened`, { cause: err });
      this.#options.onFault?.(err);
    }
  }

  #read<R>(span: Span, schema: { parse: (x: unknown) => R }): R {
    const buf = Buffer.alloc(span.bytes);
    const n = readSync(this.#rfh.fd, buf, 0, span.bytes, span.offset);
    if (n !== span.bytes) throw new StorageError(`ledger ${this.path}: short read at offset ${span.offset}`);
    return schema.parse(JSON.parse(buf.toString('utf8', 0, span.bytes - 1)));
  }
}

function expectSpan(span: Span | undefined, k: string): Span {
  if (span === undefined) throw new StorageError(`compaction lost the line of ${k}`);
  return span;
}

interface Indexed {
  entries: Map<string, Entry>;
  bytes: number;
  liveBytes: number;
}

/** Streams the file into the index: per key its digests, owner and where its lines are. */
async function index(path: string): Promise<Indexed> {
  const entries = new Map<string, Entry>();
  let bytes = 0;
  let liveBytes = 0;
  for await (const l of ledgerLines(path)) {
    const r = l.record;
    const span = { offset: l.offset, bytes: l.bytes };
    bytes += l.bytes;
    const where = () => new StorageError(`ledger ${path} is corrupt at record ${l.line}: ${r.type} out of order; trajwatch will not reset it`);
    if (r.type === 'intent') {
      if (entries.has(keyString(r.key))) throw where();
      entries.set(keyString(r.key), { digests: r.digests, owner: r.owner, intent: span });
      liveBytes += l.bytes;
    } else if (r.type === 'result') {
      const e = entries.get(keyString(r.key));
      if (e === undefined || e.result !== undefined || e.digests.input !== r.inputDigest) throw where();
      e.result = span;
      liveBytes += l.bytes;
    }
  }
  return { entries, bytes, liveBytes };
}
