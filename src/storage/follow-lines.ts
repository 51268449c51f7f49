import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { rotatedSegments } from './segment-naming.ts';

export interface FollowOptions {
  /** Start at the oldest file of the log, closed ones included (default: at the end, only what arrives from now on). */
  fromStart: boolean;
  /** How often the file is looked at again. */
  pollMs: number;
  signal: AbortSignal;
}

/** The file being read: where it starts in the whole log, whether it is the active one. */
interface Reading {
  handle: FileHandle;
  ino: number;
  /** Log-wide offset of its first byte (the number its closed name carries). */
  base: number;
  active: boolean;
  position: number;
}

/**
 * Follows a rotated JSON-lines log (`findings.jsonl`, closed files `findings.<offset>.jsonl`,
 * see `segment-naming.ts`), yielding whole lines in order, waiting for the log to appear.
 * A rotation renames the active file: the open descriptor still reads it, so its last lines
 * are read to its end (nothing is appended to a renamed file), and the follower goes on with
 * the file whose name is the offset where that one ended — closed by then if the writer rolled
 * more than once between two looks — or else the active one. A file that shrinks under the
 * same identity was truncated: it is read again from its start.
 */
export async function* followLines(path: string, options: FollowOptions): AsyncGenerator<string> {
  const dir = dirname(path);
  const naming = rotatedSegments(basename(path));
  let reading: Reading | undefined;
  let nextBase: number | undefined;
  let first = true;
  let partial = '';
  try {
    while (!options.signal.aborted) {
      if (reading === undefined) {
        reading = await openNext(dir, path, naming.parse, nextBase, first && options.fromStart);
        if (reading !== undefined && first && !options.fromStart) reading.position = (await reading.handle.stat()).size;
        if (reading !== undefined) first = false;
      }
      if (reading !== undefined) {
        // The name's identity before reading: if it changed, this read drains the renamed file.
        const named = reading.active ? await stat(path).catch(() => undefined) : undefined;
        const { size } = await reading.handle.stat();
        if (size < reading.position) reading.position = 0;
        if (size > reading.position) {
          const buffer = Buffer.alloc(size - reading.position);
          const { bytesRead } = await reading.handle.read(buffer, 0, buffer.length, reading.position);
          reading.position += bytesRead;
          const lines = (partial + buffer.toString('utf8', 0, bytesRead)).split('\n');
          partial = lines.pop()!;
          for (const line of lines) if (line !== '') yield line;
        }
        if (!reading.active || named === undefined || named.ino !== reading.ino) {
          nextBase = reading.base + reading.position;
          await reading.handle.close();
          reading = undefined;
          continue;
        }
      }
      await new Promise((r) => setTimeout(r, options.pollMs));
    }
  } finally {
    await reading?.handle.close();
  }
}

/**
 * The file to read next: the closed one named `nextBase` (or the oldest after it, when
 * retention deleted it first), else the active one. On the first open, with `fromStart`, the
 * oldest closed file.
 */
async function openNext(
  dir: string,
  path: string,
  parse: (name: string) => number | undefined,
  nextBase: number | undefined,
  fromStart: boolean,
): Promise<Reading | undefined> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const closed = names
    .map((name) => ({ name, base: parse(name) }))
    .filter((c): c is { name: string; base: number } => c.base !== undefined)
    .sort((a, b) => a.base - b.base);
  const candidate = nextBase === undefined ? (fromStart ? closed[0] : undefined) : closed.find((c) => c.base >= nextBase);
  if (candidate !== undefined) {
    const handle = await open(join(dir, candidate.name), 'r').catch(() => undefined);
    if (handle !== undefined) return { handle, ino: (await handle.stat()).ino, base: candidate.base, active: false, position: 0 };
  }
  const handle = await open(path, 'r').catch(() => undefined);
  if (handle === undefined) return undefined;
  const last = closed.at(-1);
  const lastSize = last === undefined ? 0 : await stat(join(dir, last.name)).then((s) => s.size, () => 0);
  const base = nextBase ?? (last === undefined ? 0 : last.base + lastSize);
  return { handle, ino: (await handle.stat()).ino, base, active: true, position: 0 };
}
