import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { labelCommand } from '../../../src/cli/label.ts';
import { Browser, CHROMIUM } from '../../helpers/cdp.ts';
import { runCli } from '../../helpers/cli.ts';
import { readPng, shareOfColour } from '../../helpers/png.ts';
import { IN_REPO_DIR } from '../../helpers/trail-corpus.ts';

// The trajectory page (`/trajectories/KEY`, served by `trajwatch label`) over a replayed corpus
// trajectory, in real headless Chromium: `show`'s timeline, and each finding's marker drawn
// under the step its evidence names — checked by the elements' geometry and by the pixels of a
// screenshot, not only that the page loads.

const KEY = '272cdc645b731837366576b37d40fb65';
const haveChromium = existsSync(CHROMIUM);
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface Box {
  top: number;
  bottom: number;
  left: number;
  right: number;
}

describe.skipIf(!haveChromium)('the trajectory page in real headless Chromium', () => {
  let url = '';
  let b: Browser;

  beforeAll(async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-trajectory-page-'));
    const replay = await runCli([
      'replay',
      join(IN_REPO_DIR, `${KEY}.otlp.json.gz`),
      '--trajectories',
      join(dataDir, 'trajectories.jsonl'),
      '--findings',
      join(dataDir, 'findings.jsonl'),
    ]);
    expect(replay.code, replay.stderr).toBe(0);
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const stop = new AbortController();
    await new Promise<void>((resolve) => void labelCommand(['--data-dir', dataDir, '--port', '0'], stop.signal, (u) => ((url = u), resolve())));
    vi.restoreAllMocks();
    cleanups.push(() => stop.abort());
    b = await Browser.launch();
    cleanups.push(() => b.close());
  }, 120_000);

  it("shows show's timeline: the header, the capture gap, the manifest's claims, every step nested by parent with its duration, and each finding's marker under its step", {
    timeout: 120_000,
  }, async () => {
    await b.goto(`${url}trajectories/${KEY}`);
    await b.waitFor(`document.querySelectorAll('#timeline li.step').length === 58`);
    expect(await b.eval<string>(`document.querySelector('#trajectory-summary').textContent`)).toMatch(
      /^revision 1 · complete \(closed by [a-z-]+\) · 58 steps · 2 findings · started 2025-03-25T08:50:19\.971Z$/,
    );
    expect(await b.eval<string[]>(`[...document.querySelectorAll('#capture-gaps li')].map((l) => l.textContent)`)).toContain(
      'capture gap: tool-result-not-captured on 1 span(s)',
    );
    // The manifest's claims: every check with its status, and what the judge did.
    const checks = await b.eval<{ check: string; status: string }[]>(
      `[...document.querySelectorAll('#manifest-checks tbody tr')].map((r) => ({ check: r.dataset.check, status: r.children[1].textContent }))`,
    );
    expect(checks.length).toBeGreaterThan(3);
    expect(checks.find((c) => c.check === 'error-output')?.status).toBe('fired');
    expect(await b.eval<string>(`document.querySelector('#manifest-judge').textContent`)).toMatch(/^Judge disabled/);
    // The first step is the root, offset 0, as show prints it (+0.000s, 354.567s).
    const first = await b.eval<{ offset: string; duration: string; title: string; depth: string }>(
      `(() => { const s = document.querySelector('#timeline li.step'); return { offset: s.querySelector('.offset').textContent, duration: s.querySelector('.duration').textContent, title: s.querySelector('.step-title').textContent, depth: s.dataset.depth }; })()`,
    );
    expect(first).toEqual({ offset: '+0.000s', duration: '354.567s', title: 'other · process_item', depth: '0' });
    // Nested by parent: each deeper step starts further right than its parent.
    const nesting = await b.eval<
      { depth: number; left: number; parentLeft: number }[]
    >(`[...document.querySelectorAll('#timeline li.step')].filter((s) => s.dataset.depth !== '0').map((s) => {
      const parent = document.querySelector('#step-' + CSS.escape(s.dataset.parent ?? ''));
      return { depth: Number(s.dataset.depth), left: s.getBoundingClientRect().left, parentLeft: parent?.getBoundingClientRect().left ?? -1 };
    })`);
    expect(nesting.length).toBeGreaterThan(10);
    for (const n of nesting) expect(n.left).toBeGreaterThan(n.parentLeft);

    // Two findings, each marked once, under the step its evidence names: the error-output one under the failed "Step 22".
    expect(await b.eval<number>(`document.querySelectorAll('.finding-marker').length`)).toBe(2);
    const geometry = await b.eval<{ stepTitle: string; head: Box; marker: Box; next: Box; text: string; failed: boolean }>(`(() => {
      const m = [...document.querySelectorAll('.finding-marker')].find((x) => x.textContent.includes('error-output'));
      m.scrollIntoView({ block: 'center' });
      const step = m.closest('li.step');
      const box = (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
      return { stepTitle: step.querySelector('.step-title').textContent, failed: step.classList.contains('failed'), head: box(step.querySelector('.step-head')), marker: box(m), next: box(step.nextElementSibling), text: m.textContent };
    })()`);
    expect(geometry.stepTitle).toContain('Step 22');
    expect(geometry.failed).toBe(true);
    expect(geometry.text).toContain('error-output: Candidate error-output (not a verdict): other step "Step 22" failed');
    // Under its step: below the step's line, above the next step, indented past the step's start.
    expect(geometry.marker.top).toBeGreaterThanOrEqual(geometry.head.bottom);
    expect(geometry.marker.bottom).toBeLessThanOrEqual(geometry.next.top);
    expect(geometry.marker.left).toBeGreaterThan(geometry.head.left);

    // The screenshot shows it there: the marker's box is drawn in the marker's colour, the step's line above it is not.
    const clip = async (r: Box) => {
      const scroll = await b.eval<{ x: number; y: number }>(`({ x: scrollX, y: scrollY })`);
      const shot = (await b.send('Page.captureScreenshot', {
        format: 'png',
        clip: { x: r.left + scroll.x, y: r.top + scroll.y, width: r.right - r.left, height: r.bottom - r.top, scale: 1 },
      })) as { data: string };
      return readPng(Buffer.from(shot.data, 'base64'));
    };
    const bg = (
      await b.eval<string>(
        `getComputedStyle([...document.querySelectorAll('.finding-marker')].find((x) => x.textContent.includes('error-output'))).backgroundColor`,
      )
    )
      .match(/\d+/g)!
      .slice(0, 3)
      .map(Number) as [number, number, number];
    expect(bg).not.toEqual([255, 255, 255]);
    expect(shareOfColour(await clip(geometry.marker), bg)).toBeGreaterThan(0.4);
    expect(shareOfColour(await clip(geometry.head), bg)).toBeLessThan(0.01);
    if (process.env.TRAJWATCH_TRAJECTORY_SCREENSHOT !== undefined) {
      const shot = (await b.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
      await writeFile(process.env.TRAJWATCH_TRAJECTORY_SCREENSHOT, Buffer.from(shot.data, 'base64'));
    }

    // A step's content, read by kind, when opened.
    const opened = await b.eval<string>(
      `(() => { const s = document.querySelector('.finding-marker').closest('li.step'); s.querySelector('details').open = true; return s.querySelector('.read').textContent; })()`,
    );
    expect(opened.length).toBeGreaterThan(0);
    expect(b.console.filter((c) => c.startsWith('exception'))).toEqual([]);
  });

  it("opens at a finding's link, and names a key it does not know", { timeout: 60_000 }, async () => {
    const id = await b.eval<string>(`document.querySelector('.finding-marker').dataset.finding`);
    await b.goto(`${url}trajectories/${KEY.slice(0, 8)}#finding-${id}`);
    await b.waitFor(`document.querySelector('.finding-marker.target') !== null`);
    expect(
      await b.eval<boolean>(
        `(() => { const r = document.querySelector('.finding-marker.target').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`,
      ),
    ).toBe(true);
    await b.goto(`${url}trajectories/no-such-key`);
    const text = await b.waitFor<string>(`document.querySelector('#not-found')?.textContent`);
    expect(text).toContain('Could not open trajectory no-such-key: no trajectory with key no-such-key');
  });
});
