import { open, readFile, unlink } from 'node:fs/promises';
import { StorageError } from '../../errors.ts';

/** Take the lock; a lock whose pid is not alive is taken over. Returns whether it was taken over. */
export async function acquireLock(lockPath: string, owner: string): Promise<boolean> {
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

export async function releaseLock(lockPath: string): Promise<void> {
  await unlink(lockPath).catch(() => undefined);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
