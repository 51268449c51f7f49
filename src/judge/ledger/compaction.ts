import { open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StorageError } from '../../errors.ts';
import { syncDir } from '../../storage/sync-dir.ts';
import { rawLines } from './lines.ts';

/** The compacted ledger is written here first, then renamed over the ledger. */
export const COMPACT_SUFFIX = '.compact';

/** Bytes buffered before a write to the temporary file. */
const WRITE_BATCH_BYTES = 1 << 20;

/**
 * The points between compaction's steps, in order. A crash after `temp-written` or
 * `temp-synced` leaves the old ledger and a temporary file (removed at the next open); after
 * `renamed` the ledger is the old or the new one (the rename is atomic; the directory fsync
 * makes it durable), never neither and never a mix.
 */
export const COMPACTION_STEPS = ['temp-written', 'temp-synced', 'renamed', 'dir-synced'] as const;
export type CompactionStep = (typeof COMPACTION_STEPS)[number];

/** Where a line replay needs now is in the compacted file. */
export interface Span {
  offset: number;
  bytes: number;
}

export interface Compacted {
  /** The compacted file's size. */
  bytes: number;
  /** Per key (`keyString`), where its intent and result lines now are. */
  spans: Map<string, { intent?: Span; result?: Span }>;
  /** Lines dropped (refused/deferred audit lines). */
  dropped: number;
}

/**
 * Rewrites the ledger at `path` with only what replay needs — every intent and result line,
 * byte for byte and in order — dropping the refused/deferred audit lines (the manifest is their
 * durable record). Streamed: one read chunk and one write batch in memory. Writes
 * `<path>.compact`, fsyncs it, renames it over `path` and fsyncs the directory. The caller
 * holds the ledger lock and writes nothing meanwhile. On failure the temporary file is removed
 * and the old ledger stays as it was. `onStep` is told after each step (tests stop there as a
 * crash would).
 */
export async function compactLedger(
  path: string,
  keyOf: (key: unknown) => string,
  onStep?: (step: CompactionStep) => void | Promise<void>,
): Promise<Compacted> {
  const tmp = path + COMPACT_SUFFIX;
  const spans = new Map<string, { intent?: Span; result?: Span }>();
  let bytes = 0;
  let dropped = 0;
  const out = await open(tmp, 'w');
  let renamed = false;
  try {
    let batch: string[] = [];
    let batchBytes = 0;
    for await (const l of rawLines(path)) {
      const r = JSON.parse(l.text) as { type: string; key?: unknown };
      if (r.type !== 'intent' && r.type !== 'result') {
        dropped++;
        continue;
      }
      const k = keyOf(r.key);
      const entry = spans.get(k) ?? {};
      entry[r.type] = { offset: bytes, bytes: l.bytes };
      spans.set(k, entry);
      batch.push(l.text, '\n');
      batchBytes += l.bytes;
      bytes += l.bytes;
      if (batchBytes >= WRITE_BATCH_BYTES) {
        await out.write(batch.join(''));
        batch = [];
        batchBytes = 0;
      }
    }
    if (batch.length > 0) await out.write(batch.join(''));
    await onStep?.('temp-written');
    await out.sync();
    await out.close();
    await onStep?.('temp-synced');
    await rename(tmp, path);
    renamed = true;
    await onStep?.('renamed');
    await syncDir(dirname(path));
    await onStep?.('dir-synced');
    return { bytes, spans, dropped };
  } catch (err) {
    await out.close().catch(() => undefined);
    if (!renamed) await unlink(tmp).catch(() => undefined);
    throw err instanceof StorageError ? err : new StorageError(`ledger ${path} could not be compacted`, { cause: err });
  }
}

/** Removes a temporary file a crashed compaction left; the ledger beside it is the authoritative one. */
export async function removeStaleCompaction(path: string): Promise<boolean> {
  try {
    await unlink(path + COMPACT_SUFFIX);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new StorageError(`cannot remove the stale compaction file ${path + COMPACT_SUFFIX}`, { cause: err });
  }
}
