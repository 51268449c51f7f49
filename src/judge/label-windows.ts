import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { canonicalDigest } from '../core/digest.ts';
import { StorageError } from '../errors.ts';
import type { TraceWindow } from '../windows/window.ts';

const MIB = 1024 * 1024;

/**
 * The windows offered for labeling (`judge.labelWindows`). The ledger keeps digests and event
 * maps, not content, so `trajwatch label` could not show a labeler what the judge saw without
 * this store: each judged window, as sent (redacted events, limitations), one file each.
 *
 * Named bounds, each with its unit; retention is **oldest first** (by the time the window was
 * stored): when storing a window would pass `maxWindows` or `maxBytes`, the oldest stored
 * windows are deleted until it fits, and windows stored more than `maxAgeHours` ago are
 * deleted at open and on every store. A deleted window can no longer be labeled; its labels
 * already in the gold file stay there, and the judge's ledger is untouched. Every deletion is
 * counted by reason (`stats().evicted`), never silent.
 */
export const LabelWindowsSchema = z
  .strictObject({
    /** Keep judged windows for labeling at all. */
    enabled: z.boolean().default(true),
    /** Directory; relative paths are under `dataDir`. */
    dir: z.string().min(1).default('judge/label-windows'),
    /** Windows kept at most (count). */
    maxWindows: z.int().min(1).default(10_000),
    /** Bytes of window files kept at most. */
    maxBytes: z
      .int()
      .min(64 * 1024)
      .default(256 * MIB),
    /** Age in hours past which a stored window is deleted. */
    maxAgeHours: z
      .int()
      .min(1)
      .default(24 * 30),
  })
  .prefault({});
export type LabelWindowsConfig = z.infer<typeof LabelWindowsSchema>;

export const LABEL_WINDOW_FORMAT = 'trajwatch.label-window/1';

const StoredWindowSchema = z.strictObject({
  format: z.literal(LABEL_WINDOW_FORMAT),
  windowId: z.string().regex(/^w1_[0-9a-f]{24}$/),
  trajectoryKey: z.string(),
  revision: z.int(),
  kind: z.enum(['event', 'turn', 'agent']),
  anchor: z.string(),
  triggers: z.array(z.string()),
  startedAt: z.string(),
  endedAt: z.string(),
  limitations: z.array(z.string()),
  events: z.array(z.strictObject({ id: z.string(), content: z.string(), evidenceRefs: z.array(z.unknown()) })),
  redactions: z.int(),
  policyDigest: z.string(),
  /** canonicalDigest({kind, limitations, events}): the ledger intent's `digests.state`. */
  stateDigest: z.string().regex(/^[0-9a-f]{64}$/),
  storedAt: z.iso.datetime(),
});
export type StoredWindow = z.infer<typeof StoredWindowSchema>;

/** The content digest the ledger records as `digests.state` (ledger-protocol.ts computes the same). */
export function windowStateDigest(w: Pick<StoredWindow, 'kind' | 'limitations' | 'events'>): string {
  return canonicalDigest({ kind: w.kind, limitations: w.limitations, events: w.events });
}

export interface LabelWindowStats {
  windows: number;
  bytes: number;
  stored: number;
  evicted: { 'max-windows': number; 'max-bytes': number; 'max-age': number };
}

const fileOf = (dir: string, windowId: string) => join(dir, `${windowId}.json`);
const ID_FILE = /^(w1_[0-9a-f]{24})\.json$/;

/** The writer: one per data directory (the judge of `serve`), bounded as configured. */
export class LabelWindowStore {
  readonly #dir: string;
  readonly #cfg: LabelWindowsConfig;
  readonly #now: () => number;
  /** windowId → bytes and stored time, oldest first (insertion order after the sort at open). */
  readonly #index = new Map<string, { bytes: number; at: number }>();
  #bytes = 0;
  #stored = 0;
  readonly #evicted: LabelWindowStats['evicted'] = { 'max-windows': 0, 'max-bytes': 0, 'max-age': 0 };
  #chain: Promise<unknown> = Promise.resolve();

  private constructor(dir: string, cfg: LabelWindowsConfig, now: () => number) {
    this.#dir = dir;
    this.#cfg = cfg;
    this.#now = now;
  }

  static async open(dir: string, cfg: LabelWindowsConfig, now: () => number = Date.now): Promise<LabelWindowStore> {
    const store = new LabelWindowStore(dir, cfg, now);
    await mkdir(dir, { recursive: true });
    const found: { id: string; bytes: number; at: number }[] = [];
    for (const name of await readdir(dir)) {
      const m = ID_FILE.exec(name);
      if (m === null) {
        // A temporary file left by a crash mid-store: never a window anyone was offered.
        if (name.endsWith('.tmp')) await unlink(join(dir, name)).catch(() => undefined);
        continue;
      }
      const s = await stat(join(dir, name));
      found.push({ id: m[1]!, bytes: s.size, at: s.mtimeMs });
    }
    found.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
    for (const f of found) {
      store.#index.set(f.id, { bytes: f.bytes, at: f.at });
      store.#bytes += f.bytes;
    }
    await store.#expire();
    return store;
  }

  stats(): LabelWindowStats {
    return { windows: this.#index.size, bytes: this.#bytes, stored: this.#stored, evicted: { ...this.#evicted } };
  }

  /** Stores a judged window as it was sent (written to a temporary file, then renamed). */
  put(window: TraceWindow): Promise<void> {
    const run = this.#chain.then(() => this.#put(window));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #put(w: TraceWindow): Promise<void> {
    if (this.#index.has(w.id)) return;
    const at = this.#now();
    const record: StoredWindow = {
      format: LABEL_WINDOW_FORMAT,
      windowId: w.id,
      trajectoryKey: w.subject.trajectoryKey,
      revision: w.subject.revision,
      kind: w.kind,
      anchor: w.anchor,
      triggers: [...w.triggers],
      startedAt: w.startedAt,
      endedAt: w.endedAt,
      limitations: [...w.limitations],
      events: w.events.map((e) => ({ id: e.id, content: e.content, evidenceRefs: [...e.evidenceRefs] })),
      redactions: w.redactions,
      policyDigest: w.policyDigest,
      stateDigest: windowStateDigest(w),
      storedAt: new Date(at).toISOString(),
    };
    const text = JSON.stringify(record) + '\n';
    const bytes = Buffer.byteLength(text);
    await this.#expire();
    // Oldest first, until the new window fits both bounds.
    while (this.#index.size > 0 && (this.#index.size + 1 > this.#cfg.maxWindows || this.#bytes + bytes > this.#cfg.maxBytes)) {
      await this.#evictOldest(this.#index.size + 1 > this.#cfg.maxWindows ? 'max-windows' : 'max-bytes');
    }
    if (bytes > this.#cfg.maxBytes) {
      this.#evicted['max-bytes']++;
      return;
    }
    const path = fileOf(this.#dir, w.id);
    const tmp = `${path}.tmp`;
    const fh = await open(tmp, 'w');
    try {
      await fh.write(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
    this.#index.set(w.id, { bytes, at });
    this.#bytes += bytes;
    this.#stored++;
  }

  async #expire(): Promise<void> {
    const cutoff = this.#now() - this.#cfg.maxAgeHours * 3_600_000;
    for (const [id, e] of this.#index) {
      if (e.at >= cutoff) break;
      await this.#delete(id, 'max-age');
    }
  }

  async #evictOldest(reason: 'max-windows' | 'max-bytes'): Promise<void> {
    const oldest = this.#index.keys().next().value!;
    await this.#delete(oldest, reason);
  }

  async #delete(id: string, reason: keyof LabelWindowStats['evicted']): Promise<void> {
    await unlink(fileOf(this.#dir, id)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    this.#bytes -= this.#index.get(id)!.bytes;
    this.#index.delete(id);
    this.#evicted[reason]++;
  }
}

/** Ids of the windows stored in a directory (the reader: `trajwatch label`, which deletes nothing). */
export async function storedWindowIds(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).flatMap((n) => {
      const m = ID_FILE.exec(n);
      return m === null ? [] : [m[1]!];
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * One stored window, checked: its file must validate and its content must still have the
 * digest it was stored with and, when given, the digest the ledger recorded for it — a window
 * edited after it was judged is refused (StorageError naming it), never shown as what the judge
 * saw. Null when it is not stored (never, or evicted).
 */
export async function readStoredWindow(dir: string, windowId: string, ledgerStateDigest?: string): Promise<StoredWindow | null> {
  if (!/^w1_[0-9a-f]{24}$/.test(windowId)) return null;
  let text: string;
  try {
    text = await readFile(fileOf(dir, windowId), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StorageError(`label window ${windowId} could not be read`, { cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new StorageError(`label window ${windowId} is not JSON: it was changed after it was stored; it cannot be labeled`, { context: { windowId } });
  }
  const r = StoredWindowSchema.safeParse(json);
  if (!r.success || r.data.windowId !== windowId) {
    throw new StorageError(`label window ${windowId} does not validate: it was changed after it was stored; it cannot be labeled`, { context: { windowId } });
  }
  const digest = windowStateDigest(r.data);
  if (digest !== r.data.stateDigest || (ledgerStateDigest !== undefined && digest !== ledgerStateDigest)) {
    throw new StorageError(
      `label window ${windowId} was tampered with: its content digest ${digest.slice(0, 12)}… is not the one the judge saw (${(ledgerStateDigest ?? r.data.stateDigest).slice(0, 12)}…); it cannot be labeled`,
      { context: { windowId } },
    );
  }
  return r.data;
}
