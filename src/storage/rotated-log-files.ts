import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { rotatedSegments } from './segment-naming.ts';

/**
 * The files of the rotated local log at `path` (`trajectories.jsonl`, `findings.jsonl`), oldest
 * first: the closed segments `<stem>.<offset of their first byte, 16 digits><ext>` by offset
 * (`rotatedSegments`), then the active file. None when the directory is not there. Read by
 * `show` and `verify`.
 */
export async function logFiles(path: string): Promise<string[]> {
  const dir = dirname(path);
  const name = basename(path);
  const naming = rotatedSegments(name);
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const segments = entries
    .map((f) => ({ f, offset: naming.parse(f) }))
    .filter((s): s is { f: string; offset: number } => s.offset !== undefined)
    .sort((a, b) => a.offset - b.offset)
    .map((s) => s.f);
  return [...segments, ...(entries.includes(name) ? [name] : [])].map((f) => join(dir, f));
}
