import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageError } from '../errors.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import {
  LedgerRecordSchema,
  type InputDigests,
  type IntentRecord,
  type LedgerKey,
  type LedgerRecord,
  type ResultRecord,
  type SkipRecord,
} from './ledger-record.ts';

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
  | { kind: 'in-flight' };

interface Entry {
  intent: IntentRecord;
  result?: ResultRecord;
}

export function keyString(k: LedgerKey): string {
  return canonicalJson([k.point, k.runId, k.invocationId]);
}

/**
 * The durable decision ledger: append-only JSONL, every line fsync'd before its promise
 * resolves, one writer at a time (a lock file naming the owner's pid; a dead owner's lock is
 * taken over). Opening reads and validates every line: a corrupt ledger refuses to open with
 * the line and the problem, and is never reset.
 */
export class Ledger {
  readonly path: string;
  readonly owner: string;
  readonly #lockPath: string;
  readonly #fh: FileHandle;
  readonly #entries: Map<string, Entry>;
  #tail: Promise<void> = Promise.resolve();
  #failure: Error | undefined;
  #closed = false;
  /** Whether opening took over a lock left by a dead process. */
  readonly tookOverDeadLock: boolean;

  private constructor(path: string, lockPath: string, fh: FileHandle, entries: Map<string, Entry>, owner: string, tookOver: boolean) {
    this.path = path;
    this.#lockPath = lockPath;
    this.#fh = fh;
    this.#entries = entries;
    this.owner = owner;
    this.tookOverDeadLock = tookOver;
  }

  static async open(dir: string): Promise<Ledger> {
    await mkdir(dir, { recursive: true });
    const owner = randomUUID();
    const lockPath = join(dir, LOCK_FILE);
    const tookOver = await acquireLock(lockPath, owner);
    const path = join(dir, LEDGER_FILE);
    try {
      const entries = index(await readLedger(path), path);
      const fh = await open(path, 'a');
      return new Ledger(path, lockPath, fh, entries, owner, tookOver);
    } catch (err) {
      await unlink(lockPath).catch(() => undefined);
      throw err;
    }
  }

  /** The entry for a key, judged against the digests of the invocation about to be made. */
  lookup(key: LedgerKey, digests: InputDigests): Lookup {
    const entry = this.#entries.get(keyString(key));
    if (entry === undefined) return { kind: 'new' };
    if (entry.intent.digests.input !== digests.input) {
      const was = entry.intent.digests as Record<string, string>;
      const now = digests as Record<string, string>;
      return { kind: 'conflict', changed: Object.keys(now).filter((k) => k !== 'input' && was[k] !== now[k]) };
    }
    if (entry.result !== undefined) return { kind: 'replay', result: entry.result };
    return entry.intent.owner === this.owner ? { kind: 'in-flight' } : { kind: 'unresolved-intent', intent: entry.intent };
  }

  /** Durable before it resolves: inference may start only after this. */
  async appendIntent(record: IntentRecord): Promise<void> {
    const k = keyString(record.key);
    if (this.#entries.has(k)) throw new StorageError(`ledger already holds an intent for ${k}`);
    this.#entries.set(k, { intent: record });
    await this.#append(record);
  }

  async appendResult(record: ResultRecord): Promise<void> {
    const entry = this.#entries.get(keyString(record.key));
    if (entry === undefined || entry.result !== undefined) throw new StorageError(`no open intent for ${keyString(record.key)}`);
    entry.result = record;
    await this.#append(record);
  }

  async appendSkip(record: SkipRecord): Promise<void> {
    await this.#append(record);
  }

  /** Waits for pending appends, closes the file and releases the lock. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail.catch(() => undefined);
    await this.#fh.close();
    await unlink(this.#lockPath).catch(() => undefined);
  }

  #append(record: LedgerRecord): Promise<void> {
    const line = JSON.stringify(record) + '\n';
    const write = async () => {
      if (this.#failure !== undefined) throw this.#failure;
      if (this.#closed) throw new StorageError('ledger is closed');
      try {
        await this.#fh.write(line);
        await this.#fh.sync();
      } catch (err) {
        this.#failure = new StorageError(`ledger ${this.path} could not be written`, { cause: err });
        throw this.#failure;
      }
    };
    const p = this.#tail.then(write);
    this.#tail = p.catch(() => undefined);
    return p;
  }
}

/**
 * Every record of a ledger file, validated; a missing file is an empty ledger. Read-only (no
 * lock): `trajwatch calibrate` reads a live ledger this way.
 */
export async function readLedger(path: string): Promise<LedgerRecord[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new StorageError(`ledger ${path} could not be read`, { cause: err });
  }
  const corrupt = (line: number, why: string) =>
    new StorageError(
      `ledger ${path} is corrupt at line ${line}: ${why}. trajwatch will not reset it; move it aside deliberately (keeping it for audit) to start a new ledger`,
      { context: { path, line } },
    );
  if (text.length > 0 && !text.endsWith('\n')) {
    const lines = text.split('\n').length;
    throw corrupt(lines, 'the last line is incomplete (torn write)');
  }
  const records: LedgerRecord[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length - 1; i++) {
    let json: unknown;
    try {
      json = JSON.parse(lines[i]!);
    } catch {
      throw corrupt(i + 1, 'not JSON');
    }
    const r = LedgerRecordSchema.safeParse(json);
    if (!r.success) throw corrupt(i + 1, r.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; '));
    records.push(r.data);
  }
  return records;
}

function index(records: readonly LedgerRecord[], path: string): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  records.forEach((r, i) => {
    const where = () => new StorageError(`ledger ${path} is corrupt at record ${i + 1}: ${r.type} out of order; trajwatch will not reset it`);
    if (r.type === 'intent') {
      if (entries.has(keyString(r.key))) throw where();
      entries.set(keyString(r.key), { intent: r });
    } else if (r.type === 'result') {
      const e = entries.get(keyString(r.key));
      if (e === undefined || e.result !== undefined || e.intent.digests.input !== r.inputDigest) throw where();
      e.result = r;
    }
  });
  return entries;
}

/** Take the lock; a lock whose pid is not alive is taken over. Returns whether it was taken over. */
async function acquireLock(lockPath: string, owner: string): Promise<boolean> {
  const body = JSON.stringify({ pid: process.pid, owner });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(lockPath, 'wx');
      await fh.writeFile(body);
      await fh.sync();
      await fh.close();
      return attempt > 0;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new StorageError(`cannot create ledger lock ${lockPath}`, { cause: err });
    }
    let pid: number;
    try {
      pid = (JSON.parse(await readFile(lockPath, 'utf8')) as { pid: number }).pid;
    } catch (err) {
      throw new StorageError(`ledger lock ${lockPath} exists but cannot be read; remove it only if no trajwatch is running`, { cause: err });
    }
    if (!Number.isInteger(pid) || pid <= 0) throw new StorageError(`ledger lock ${lockPath} names no valid pid`);
    if (isAlive(pid)) throw new StorageError(`ledger is locked by a running process (pid ${pid}): ${lockPath}`, { context: { pid } });
    await unlink(lockPath).catch(() => undefined);
  }
  throw new StorageError(`could not take over the ledger lock ${lockPath}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
