import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { labelCommand } from '../../src/cli/label.ts';
import { ConfigError, StorageError } from '../../src/errors.ts';
import { judgeWindows } from '../calibration/label/label-fixture.ts';
import { rawRequest } from '../calibration/label/raw-request.ts';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('trajwatch label', () => {
  it('serves the data directory of a past serve on loopback, and stops on its signal', async () => {
    const j = await judgeWindows([
      ['run-a', true],
      ['run-b', false],
    ]);
    cleanups.push(() => j.model.close());
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    const stop = new AbortController();
    let url = '';
    const listening = new Promise<void>((resolve) => {
      void labelCommand(['--data-dir', j.dataDir, '--port', '0'], stop.signal, (u) => ((url = u), resolve())).then((code) => expect(code).toBe(0));
    });
    await listening;
    vi.restoreAllMocks();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(out.join('')).toContain(`gold file ${j.gold}, blind`);
    const list = (await (await fetch(new URL('/api/windows?labeler=ann', url))).json()) as {
      windows: { trajectoryKey: string; labeled: number; questions: number }[];
      notStored: number;
    };
    expect(list.windows.map((w) => w.trajectoryKey).sort()).toEqual(['run-a', 'run-b']);
    expect(list.windows.every((w) => w.labeled === 0 && w.questions === 8)).toBe(true);
    expect(list.notStored).toBe(0);
    stop.abort();
  });

  it('answers to each --allowed-host name besides its own, and to no other', async () => {
    const j = await judgeWindows([['run-a', true]]);
    cleanups.push(() => j.model.close());
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stop = new AbortController();
    let url = '';
    const listening = new Promise<void>((resolve) => {
      void labelCommand(['--data-dir', j.dataDir, '--port', '0', '--allowed-host', 'labels.internal'], stop.signal, (u) => ((url = u), resolve()));
    });
    await listening;
    vi.restoreAllMocks();
    const port = new URL(url).port;
    const status = async (host: string) => (await rawRequest(url, 'GET', '/api/windows', { host })).status;
    expect([await status(`labels.internal:${port}`), await status(`127.0.0.1:${port}`), await status(`labels.internal.evil.example:${port}`)]).toEqual([
      200, 200, 403,
    ]);
    stop.abort();
    await expect(labelCommand(['--data-dir', j.dataDir, '--port', '0', '--allowed-host', 'http://x:1/'])).rejects.toThrow(/--allowed-host/);
    // An unspecified address is no name anyone reaches it by: refused before serving, unless names are given.
    const auth = join(j.dataDir, 'auth.json');
    await writeFile(auth, JSON.stringify({ receiver: { auth: { tokenEnv: 'TW_LABEL_TEST_TOKEN' } } }));
    vi.stubEnv('TW_LABEL_TEST_TOKEN', 'tw-label-test-token');
    await expect(labelCommand(['--config', auth, '--data-dir', j.dataDir, '--host', '0.0.0.0', '--port', '0'])).rejects.toThrow(/no name of its own/);
    vi.unstubAllEnvs();
  });

  it('refuses a non-loopback address without receiver.auth, and a malformed gold file, before serving anything', async () => {
    const j = await judgeWindows([['run-a', true]]);
    cleanups.push(() => j.model.close());
    await expect(labelCommand(['--data-dir', j.dataDir, '--host', '0.0.0.0', '--port', '0'])).rejects.toThrow(ConfigError);
    await appendFile(j.gold, 'not json\n');
    await expect(labelCommand(['--data-dir', j.dataDir, '--port', '0'])).rejects.toThrow(StorageError);
  });
});
