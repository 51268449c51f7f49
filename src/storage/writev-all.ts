import type { FileHandle } from 'node:fs/promises';

/** Writes every buffer in order, continuing after a partial write; throws when a write takes nothing. */
export async function writevAll(handle: Pick<FileHandle, 'writev'>, buffers: Buffer[]): Promise<void> {
  let total = 0;
  for (const b of buffers) total += b.length;
  let left = buffers;
  let written = 0;
  while (written < total) {
    const { bytesWritten } = await handle.writev(left);
    // A disk that takes nothing without an error: fail rather than spin (the caller cuts the torn tail).
    if (bytesWritten === 0) throw new Error(`short write: 0 of ${total - written} bytes`);
    written += bytesWritten;
    if (written >= total) break;
    // Drop what was written; a buffer cut in the middle continues from the cut.
    let skip = bytesWritten;
    let i = 0;
    while (skip >= left[i]!.length) skip -= left[i++]!.length;
    left = [left[i]!.subarray(skip), ...left.slice(i + 1)];
  }
}
