/**
 * Reads a whole local JSON-lines log (`trajectories.jsonl`, `findings.jsonl`) for `show`. The
 * log may rotate: the active file keeps its name and closed segments sit beside it as
 * `<stem>.<offset of their first byte, 16 digits><ext>` (the storage layer's rotated naming,
 * `src/storage/segment-naming.ts`), so the log is the closed files in offset order, then the
 * active one. A rotation while reading renames the active file and could hide its lines from
 * this read: when the closed files change during the read, the whole read is done again.
 */
import { readFile } from 'node:fs/promises';
import { logFiles } from '../storage/rotated-log-files.ts';

export { logFiles };

/** Every whole line of the log at `path`, in order (a last line without its newline is still being written: left out). */
export async function readLogLines(path: string, attempts = 3): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    const files = await logFiles(path);
    const lines: string[] = [];
    for (const file of files) {
      const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined; // renamed or retired under us: the re-list below sees it
        throw err;
      });
      if (text === undefined) continue;
      const parts = text.split('\n');
      parts.pop();
      for (const line of parts) if (line !== '') lines.push(line);
    }
    const after = await logFiles(path);
    if (after.join('\n') === files.join('\n')) return lines;
    if (attempt >= attempts) throw new Error(`${path}: the log rotated during each of ${attempts} reads; try again`);
  }
}
