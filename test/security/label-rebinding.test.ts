import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { Browser, CHROMIUM } from '../helpers/cdp.ts';
import { judgeWindows, serveLabels } from '../calibration/label/label-fixture.ts';

// DNS rebinding against the label server, in Debian's real headless Chromium: the resolver rule
// makes `evil.example` resolve to 127.0.0.1, as an attacker's DNS would once its page is loaded.
// To the browser the page and the label server are then one origin (same-origin reads and
// writes are allowed); only the Host header says the request came under another name.

const Q0 = SEMANTIC_QUESTIONS[0]!.id;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe.skipIf(!existsSync(CHROMIUM))('the label server under DNS rebinding, in real headless Chromium', () => {
  it('a page under a rebound name can neither load, read windows nor write a label; the page under its own name still works', {
    timeout: 120_000,
  }, async () => {
    const j = await judgeWindows([['run-a', true]]);
    cleanups.push(() => j.model.close());
    const s = await serveLabels(j);
    cleanups.push(s.close);
    const [id] = (await readdir(j.windows)).map((n) => n.replace(/\.json$/, ''));
    const port = new URL(s.url).port;
    const b = await Browser.launch(['--host-resolver-rules=MAP evil.example 127.0.0.1']);
    cleanups.push(() => b.close());

    await b.goto(`http://evil.example:${port}/`);
    expect(await b.eval<string>('document.body.innerText')).toContain('host-not-allowed');
    const attack = `(async () => {
      const read = await fetch('/api/windows?labeler=x');
      const write = await fetch('/api/labels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ windowId: ${JSON.stringify(id)}, questionId: ${JSON.stringify(Q0)}, label: 'yes', support: null, labeler: 'mallory' }) });
      return [read.status, (await read.json()).error, write.status, (await write.json()).error];
    })()`;
    expect(await b.eval<unknown[]>(attack)).toEqual([403, 'host-not-allowed', 403, 'host-not-allowed']);
    expect(await readFile(j.gold, 'utf8').catch(() => '')).toBe('');

    // Under its own name the page loads, lists the window, and its own write (Origin sent by the browser) is taken.
    await b.goto(s.url);
    await b.waitFor(`document.activeElement?.id === 'labeler'`);
    expect(await b.eval<unknown[]>(attack.replace("'mallory'", "'ann'"))).toEqual([200, null, 201, null]);
    expect((await readFile(j.gold, 'utf8')).trim().split('\n')).toHaveLength(1);
  });
});
