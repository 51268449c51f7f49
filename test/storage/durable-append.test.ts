import { constants, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDurableAppend, syncWritten } from '../../src/storage/durable-append.ts';

describe('openDurableAppend', () => {
  it('appends to what the file holds, and writes synchronously where the platform has O_DSYNC', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'append-')), 'f');
    writeFileSync(path, 'a');
    const out = await openDurableAppend(path);
    expect(out.syncWrites).toBe(constants.O_DSYNC !== undefined);
    if (process.platform === 'linux') {
      // The kernel's own record of the descriptor's open flags (octal).
      const flags = parseInt(/^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${out.file.fd}`, 'utf8'))![1]!, 8);
      expect(flags & constants.O_DSYNC).toBe(constants.O_DSYNC);
      expect(flags & constants.O_APPEND).toBe(constants.O_APPEND);
    }
    await out.file.write(Buffer.from('b'));
    await syncWritten(out);
    await out.file.close();
    expect(readFileSync(path, 'utf8')).toBe('ab');
  });

  it('starts the file empty with truncate, and creates a missing one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'append-'));
    writeFileSync(join(dir, 'old'), 'stale');
    for (const name of ['old', 'new']) {
      const out = await openDurableAppend(join(dir, name), true);
      await out.file.write(Buffer.from('x'));
      await out.file.close();
      expect(readFileSync(join(dir, name), 'utf8')).toBe('x');
    }
  });
});
