import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A directory on a small tmpfs of its own, so a test can make real writes fail (ENOSPC) and
 * then succeed again: the tests run as root here. Undefined, with the reason, where mounting
 * is not allowed; the caller skips with that reason.
 */
export interface SmallDisk {
  dir: string;
  /** Fill the filesystem until ENOSPC. */
  fill(): void;
  /** Free what `fill` took. */
  free(): void;
  unmount(): void;
}

export function mountSmallDisk(sizeBytes = 4 * 1024 * 1024): SmallDisk | string {
  const dir = mkdtempSync(join(tmpdir(), 'trajwatch-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return `cannot mount a tmpfs to make writes fail: ${(err as Error).message.split('\n')[0]}`;
  }
  const filler = join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      const chunk = Buffer.alloc(4096, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
