import { mkdtempSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writevAll } from '../../src/storage/writev-all.ts';

describe('writevAll', () => {
  it('writes every buffer in order to a real file', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'writev-')), 'f');
    const handle = await open(path, 'a');
    await writevAll(handle, [Buffer.from('ab'), Buffer.from(''), Buffer.from('cde')]);
    await handle.close();
    expect(readFileSync(path, 'utf8')).toBe('abcde');
  });

  it('continues after short writes, including one that cuts a buffer in the middle', async () => {
    const out: number[] = [];
    // Writes at most 3 bytes per call, like a kernel taking part of a vector.
    const handle = {
      writev: async (buffers: readonly NodeJS.ArrayBufferView[]) => {
        let taken = 0;
        for (const b of buffers as Buffer[]) {
          for (const byte of b) {
            if (taken === 3) return { bytesWritten: taken, buffers: [] };
            out.push(byte);
            taken += 1;
          }
        }
        return { bytesWritten: taken, buffers: [] };
      },
    };
    await writevAll(handle as never, [Buffer.from('hello'), Buffer.from('-'), Buffer.from('world')]);
    expect(Buffer.from(out).toString()).toBe('hello-world');
  });

  it('fails instead of spinning when a write takes nothing', async () => {
    const handle = { writev: async () => ({ bytesWritten: 0, buffers: [] }) };
    await expect(writevAll(handle as never, [Buffer.from('x')])).rejects.toThrow(/short write: 0 of 1 bytes/);
  });
});
