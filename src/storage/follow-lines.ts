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
        // A log that did not exist at the first look is read from its start once it appears.
        reading = await openNext(dir, path, naming.parse, nextBase, first ? options.fromStart : true);
        first = false;
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
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs);
        options.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  } finally {
    await reading?.handle.close();
  }
}

/**
 * The file to read next: the closed one that starts at `nextBase` (or the oldest after it,
 * when retention deleted it first), else the active one. On the first open, with `fromStart`,
 * the oldest closed file; without, the active one from its end. The active file is opened
 * first and then recognised among the closed ones by its inode, so a rotation between the
 * listing and the open can neither skip a file nor misplace where one starts.
 */
async function openNext(
  dir: string,
  path: string,
  parse: (name: string) => number | undefined,
  nextBase: number | undefined,
  fromStart: boolean,
): Promise<Reading | undefined> {
  const handle = await open(path, 'r').catch(() => undefined);
  const ino = handle === undefined ? undefined : (await handle.stat()).ino;
  const closed: { path: string; base: number; ino: number; size: number }[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const base = parse(name);
    if (base === undefined) continue;
    const s = await stat(join(dir, name)).catch(() => undefined);
    if (s !== undefined) closed.push({ path: join(dir, name), base, ino: s.ino, size: s.size });
  }
  closed.sort((a, b) => a.base - b.base);
  // Where the file just opened starts: its closed name if it was renamed meanwhile, else after the last closed one.
  const mine = closed.find((c) => c.ino === ino);
  const last = closed.at(-1);
  const activeBase = mine?.base ?? (last === undefined ? 0 : last.base + last.size);
  const from = nextBase ?? (fromStart ? -1 : activeBase);
  const candidate = closed.find((c) => c.base >= from);
  if (candidate !== undefined && candidate.base < activeBase) {
    await handle?.close();
    const other = await open(candidate.path, 'r').catch(() => undefined);
    // Deleted by retention between the listing and the open: look again.
    if (other === undefined) return undefined;
    return { handle: other, ino: candidate.ino, base: candidate.base, active: false, position: 0 };
  }
  if (handle === undefined) return undefined;
  const reading: Reading = { handle, ino: ino!, base: activeBase, active: mine === undefined, position: 0 };
  if (nextBase === undefined && !fromStart) reading.position = (await handle.stat()).size;
  return reading;
}
