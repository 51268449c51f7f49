import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Browser, CHROMIUM } from '../helpers/cdp.ts';
import { CLI_PATH } from '../helpers/cli.ts';

let child: ChildProcess | undefined;
let browser: Browser | undefined;
afterEach(async () => {
  await browser?.close();
  browser = undefined;
  child?.kill('SIGTERM');
  child = undefined;
});

/** A real `trajwatch label` on a free port; resolves with its URL and what it printed so far. */
async function startLabel(args: string[]): Promise<{ url: string; output: () => string }> {
  child = spawn(process.execPath, [CLI_PATH, 'label', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`label did not start:\n${out}`)), 20_000);
    child!.stdout!.on('data', () => {
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m !== null) clearTimeout(timer), resolve(m[1]!);
    });
    child!.once('exit', (code) => (clearTimeout(timer), reject(new Error(`label exited ${code}:\n${out}`))));
  });
  return { url, output: () => out };
}

describe('label with the judge off', () => {
  it('says at start why there is nothing to label and how to turn the judge on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-label-off-'));
    const { url, output } = await startLabel(['--data-dir', dir]);
    expect(output()).toContain('the judge is off (judge.enabled is false in the embedded defaults');
    expect(output()).toContain('judge.client');
    const list = (await (await fetch(`${url}api/windows?labeler=a`)).json()) as { windows: unknown[]; why?: string };
    expect(list.windows).toEqual([]);
    expect(list.why).toContain('judge.enabled');
  });

  it('with the judge on and nothing judged yet, says so instead', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-label-on-'));
    const config = join(dir, 'c.json');
    await writeFile(config, JSON.stringify({ judge: { enabled: true, client: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } } }));
    const { url, output } = await startLabel(['--data-dir', dir, '--config', config]);
    expect(output()).not.toContain('the judge is off');
    const list = (await (await fetch(`${url}api/windows?labeler=a`)).json()) as { why?: string };
    expect(list.why).toContain('no judged window is held yet');
  });

  it.skipIf(!existsSync(CHROMIUM))('the page shows the reason, and no literal "null"', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-label-off-'));
    const { url } = await startLabel(['--data-dir', dir]);
    browser = await Browser.launch();
    await browser.goto(url);
    await browser.waitFor(`document.activeElement?.id === 'labeler'`);
    await browser.type('reviewer-a');
    await browser.press('Enter');
    await browser.waitFor(`document.querySelector('#list-title') !== null`);
    const text = await browser.eval<string>(`document.querySelector('main').textContent`);
    expect(text).toContain('judge.enabled');
    expect(text).not.toMatch(/\bnull\b/);
    await browser.eval(`location.hash = '#/review'`);
    await browser.waitFor(`document.querySelector('main h2')?.textContent.startsWith('Review')`);
    expect(await browser.eval<string>(`document.querySelector('main').textContent`)).not.toMatch(/\bnull\b/);
  });
});
