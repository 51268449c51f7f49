import { open } from 'node:fs/promises';

/** A new, renamed or deleted file survives a crash only once its directory entry is synced. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
