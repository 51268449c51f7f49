/** A real small filesystem for disk-full tests and probes: a tmpfs (root here), and a filler that fills it. */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Mounts a tmpfs of `size` (`1m`, `20m`) on a new folder named after `prefix`; returns the
 * folder. `inodes` bounds its files too (`nr_inodes`), so creating one can fail with ENOSPC
 * while writes to open files still succeed.
 */
export function mountTmpfs(prefix: string, size: string, inodes?: number): string {
  const mountPoint = mkdtempSync(join(tmpdir(), prefix));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}${inodes === undefined ? '' : `,nr_inodes=${inodes}`}`, 'tmpfs', mountPoint]);
  return mountPoint;
}

export function unmountTmpfs(mountPoint: string): void {
  execFileSync('umount', ['-l', mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
}

/**
 * Fills the filesystem of `dir` with one file, `chunkBytes` at a time, until ENOSPC; returns
 * its path. Any other write error is thrown: the disk was not filled.
 */
export function fillDisk(dir: string, chunkBytes = 64 * 1024): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(chunkBytes, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return path;
}
