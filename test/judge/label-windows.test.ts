import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LabelWindowsSchema, LabelWindowStore, readStoredWindow } from '../../src/judge/label-windows.ts';
import type { TraceWindow } from '../../src/windows/window.ts';

const window = (n: number, content = 'x'.repeat(100)): TraceWindow => ({
  id: `w1_${n.toString(16).padStart(24, '0')}`,
  kind: 'turn',
  triggers: ['terminal'],
  anchor: `t/${n}`,
  traceIds: ['t'],
  subject: { trajectoryKey: `k${n}`, revision: 1 },
  startedAt: '2026-01-01T00:00:00.000000000Z',
  endedAt: '2026-01-01T00:00:01.000000000Z',
  limitations: [],
  events: [{ id: 'e1', content, evidenceRefs: [] }],
  redactions: 0,
  policyDigest: 'p',
});

const HOUR = 3_600_000;

describe('the label window store (judge.labelWindows): named bounds, oldest first', () => {
  it('past maxWindows deletes the oldest stored windows first and counts them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-lw-'));
    let now = 1_000_000;
    const store = await LabelWindowStore.open(dir, LabelWindowsSchema.parse({ maxWindows: 3 }), () => now);
    for (let i = 1; i <= 5; i++) {
      now += 1000;
      await store.put(window(i));
    }
    expect((await readdir(dir)).sort()).toEqual([3, 4, 5].map((i) => `${window(i).id}.json`));
    expect(store.stats()).toMatchObject({ windows: 3, stored: 5, evicted: { 'max-windows': 2, 'max-bytes': 0, 'max-age': 0 } });
    expect(await readStoredWindow(dir, window(1).id)).toBeNull();
    expect((await readStoredWindow(dir, window(5).id))?.events[0]?.content).toBe('x'.repeat(100));
  });

  it('past maxBytes deletes the oldest until the new window fits', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-lw-'));
    let now = 1_000_000;
    const store = await LabelWindowStore.open(dir, LabelWindowsSchema.parse({ maxBytes: 65_536 }), () => now);
    for (let i = 1; i <= 4; i++) {
      now += 1000;
      await store.put(window(i, 'y'.repeat(20_000)));
    }
    const s = store.stats();
    expect(s.windows).toBe(3);
    expect(s.bytes).toBeLessThanOrEqual(65_536);
    expect(s.evicted['max-bytes']).toBe(1);
    expect(await readStoredWindow(dir, window(1).id)).toBeNull();
  });

  it('deletes windows older than maxAgeHours, at open and on store, and counts them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-lw-'));
    let now = Date.now();
    const store = await LabelWindowStore.open(dir, LabelWindowsSchema.parse({ maxAgeHours: 2 }), () => now);
    await store.put(window(1));
    now += HOUR;
    await store.put(window(2));
    now += 1.5 * HOUR;
    await store.put(window(3));
    expect(store.stats()).toMatchObject({ windows: 2, evicted: { 'max-age': 1 } });
    // A reopened store reads the stored times from the files and expires the rest.
    const reopened = await LabelWindowStore.open(dir, LabelWindowsSchema.parse({ maxAgeHours: 2 }), () => now + 2 * HOUR);
    expect(reopened.stats()).toMatchObject({ windows: 0, evicted: { 'max-age': 2 } });
  });

  it('refuses a stored window whose content was changed, and its temporary files from a crash are removed at open', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-lw-'));
    const store = await LabelWindowStore.open(dir, LabelWindowsSchema.parse({}));
    await store.put(window(1));
    await writeFile(join(dir, `${window(2).id}.json.tmp`), '{"half');
    await LabelWindowStore.open(dir, LabelWindowsSchema.parse({}));
    expect(await readdir(dir)).toEqual([`${window(1).id}.json`]);
    const path = join(dir, `${window(1).id}.json`);
    const { readFile } = await import('node:fs/promises');
    await writeFile(path, (await readFile(path, 'utf8')).replace('xxxx', 'xxxy'));
    await expect(readStoredWindow(dir, window(1).id)).rejects.toThrow(/tampered/);
    await writeFile(path, 'not json');
    await expect(readStoredWindow(dir, window(1).id)).rejects.toThrow(/not JSON/);
  });

  it('has named limits with their units, and refuses an unknown key', () => {
    expect(LabelWindowsSchema.parse({})).toEqual({
      enabled: true,
      dir: 'judge/label-windows',
      maxWindows: 10_000,
      maxBytes: 256 * 1024 * 1024,
      maxAgeHours: 720,
    });
    expect(LabelWindowsSchema.safeParse({ maxWindow: 3 }).success).toBe(false);
  });
});
