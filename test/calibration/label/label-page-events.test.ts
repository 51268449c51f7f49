import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { calibrateCommand } from '../../../src/cli/calibrate.ts';
import { SEMANTIC_QUESTIONS } from '../../../src/judge/questions.ts';
import { Browser, CHROMIUM } from '../../helpers/cdp.ts';
import { booking, MESSAGES } from './booking-trajectory.ts';
import { judgeWindows, serveLabels } from './label-fixture.ts';

// The window page as a labeler reads it, in real headless Chromium: each event by its kind (an
// LLM step as messages with tool calls, a tool step as name, arguments, result or error), the raw
// JSON one key away, the question panel in view however far the events scroll, the judge's
// answer after recording in view, and a mis-keyed label corrected by a new gold line.

const Q0 = SEMANTIC_QUESTIONS[0]!.id;
const haveChromium = existsSync(CHROMIUM);
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const inView = (sel: string) =>
  `(() => { const r = document.querySelector(${JSON.stringify(sel)})?.getBoundingClientRect(); return r !== undefined && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; })()`;

describe.skipIf(!haveChromium)('the window page in real headless Chromium', () => {
  it("reads each event by kind with the raw JSON one key away, keeps the question and the judge's answer in view, and takes a correction as a new gold line that calibrate reads", {
    timeout: 120_000,
  }, async () => {
    const j = await judgeWindows([['run-booking', true]], {}, booking);
    cleanups.push(() => j.model.close());
    const s = await serveLabels(j);
    cleanups.push(s.close);
    const b = await Browser.launch();
    cleanups.push(() => b.close());

    await b.goto(s.url);
    await b.waitFor(`document.activeElement?.id === 'labeler'`);
    await b.type('reviewer-c');
    await b.press('Enter');
    // Two windows: the turn, and the event window the failing tool's L0 hit asks for.
    await b.waitFor(`document.querySelectorAll('#windows tbody tr').length === 2`);
    // Each trajectory key links to its timeline page.
    expect(await b.eval<string[]>(`[...document.querySelectorAll('#windows .trajectory-link')].map((a) => a.getAttribute('href'))`)).toEqual([
      '/trajectories/run-booking',
      '/trajectories/run-booking',
    ]);
    // The list and the review never say "null".
    expect(await b.eval<string>(`document.querySelector('main').textContent`)).not.toMatch(/\bnull\b/);
    await b.eval(`[...document.querySelectorAll('#windows tbody tr')].find((r) => r.children[1].textContent === 'turn').querySelector('a').click()`);
    await b.waitFor(`document.querySelector('#question-title')?.textContent.includes('${Q0}')`);

    // The LLM step: its messages, role by role, and the tool call it asked for with pretty-printed arguments.
    const llm = await b.eval<{ roles: string[]; texts: string[]; call: string; args: string }>(`(() => {
      const e = document.querySelector('.event.kind-llm');
      return { roles: [...e.querySelectorAll('.message .role')].map((x) => x.textContent), texts: [...e.querySelectorAll('.message-text')].map((x) => x.textContent),
        call: e.querySelector('.tool-call .tool-name').textContent, args: e.querySelector('.tool-call .tool-args').textContent };
    })()`);
    expect(llm.roles).toEqual(['system', 'user', 'assistant']);
    expect(llm.texts[1]).toBe('Book the "blue" room for Friday.\nThen confirm.');
    expect(llm.call).toBe('calls book_room');
    expect(llm.args).toBe('{\n  "room": "blue",\n  "day": "friday"\n}');
    // A tool step: name, arguments, result; a failing one: its error, marked.
    const tools = await b.eval<
      { title: string; labels: string[]; failed: boolean; text: string }[]
    >(`[...document.querySelectorAll('.event.kind-tool')].slice(0, 2).map((e) => ({
      title: e.querySelector('.event-title').textContent, labels: [...e.querySelectorAll('.read .section-label')].map((x) => x.textContent), failed: e.classList.contains('failed'), text: e.querySelector('.read').textContent }))`);
    expect(tools[0]).toMatchObject({ title: 'tool book_room', labels: ['arguments', 'result'], failed: false });
    expect(tools[0]!.text).toContain('booked, all done, claims done');
    expect(tools[1]).toMatchObject({ title: 'tool notify', labels: ['arguments', 'error'], failed: true });
    expect(tools[1]!.text).toContain('TimeoutError: notify timed out after 30 s');
    // Read by kind, nothing is JSON inside JSON: no escaped quotes, no literal \n.
    const read = await b.eval<string>(`[...document.querySelectorAll('.event .read')].map((r) => r.textContent).join('')`);
    expect(read).not.toContain('\\"');
    expect(read).not.toContain('\\n');

    // The raw JSON, one key away and back; one event's alone, one click away.
    expect(await b.eval<boolean>(`[...document.querySelectorAll('.raw-json')].every((r) => r.hidden)`)).toBe(true);
    await b.press('v');
    await b.waitFor(`[...document.querySelectorAll('.raw-json')].every((r) => !r.hidden) && [...document.querySelectorAll('.read')].every((r) => r.hidden)`);
    expect(JSON.parse(await b.eval<string>(`document.querySelector('.event.kind-llm .raw-json').textContent`))).toMatchObject({
      step: 'llm',
      model: 'gpt-4o',
      input: MESSAGES,
    });
    await b.press('v');
    await b.waitFor(`[...document.querySelectorAll('.raw-json')].every((r) => r.hidden)`);
    await b.eval(`document.querySelector('.event.kind-llm .raw-toggle').click()`);
    expect(await b.eval<string[]>(`[...document.querySelectorAll('.raw-json')].filter((r) => !r.hidden).map((r) => r.closest('.event').className)`)).toEqual([
      'event kind-llm',
    ]);
    await b.eval(`document.querySelector('.event.kind-llm .raw-toggle').click()`);

    // The events run past the screen; scrolled to the end, the question panel is still in view.
    expect(await b.eval<boolean>(`document.documentElement.scrollHeight > innerHeight * 1.5`)).toBe(true);
    await b.eval(`window.scrollTo(0, document.documentElement.scrollHeight)`);
    await b.waitFor(`scrollY > 0`);
    expect(await b.eval<boolean>(inView('#question-title'))).toBe(true);
    expect(await b.eval<boolean>(inView('#label-form fieldset'))).toBe(true);

    // Mis-keyed: "no" with support e2; the judge's answer then shows in view, where the labeler looks.
    await b.press('n');
    await b.press('2');
    await b.press('Enter');
    await b.waitFor(`document.querySelector('#last-recorded')?.textContent.startsWith('Recorded ${Q0}: no')`);
    expect(await b.eval<string>(`document.querySelector('#last-recorded').textContent`)).toMatch(/The judge answered "yes".* You disagree\./);
    expect(await b.eval<boolean>(inView('#last-recorded'))).toBe(true);
    await b.eval(`window.scrollTo(0, document.documentElement.scrollHeight)`);
    expect(await b.eval<boolean>(inView('#last-recorded'))).toBe(true);
    if (process.env.TRAJWATCH_LABEL_SCREENSHOT !== undefined) {
      const shot = (await b.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
      await writeFile(process.env.TRAJWATCH_LABEL_SCREENSHOT, Buffer.from(shot.data, 'base64'));
    }

    // Back to it, corrected by keyboard: c, y, Enter. A second line supersedes the first; both stay.
    await b.press('[');
    await b.waitFor(`document.querySelector('#question-title')?.textContent.startsWith('Question 1 ') && document.querySelector('#correct') !== null`);
    await b.press('c');
    await b.waitFor(`!document.querySelector('#opt-yes').disabled`);
    await b.press('y');
    await b.press('Enter');
    await b.waitFor(`document.querySelector('#last-recorded')?.textContent.startsWith('Corrected ${Q0}: yes')`);
    expect(await b.eval<string>(`document.querySelector('#last-recorded').textContent`)).toContain('You agree.');
    expect(await b.eval<string>(`document.querySelector('#recorded').textContent`)).toContain('"yes" (support e2), a correction');
    const gold = (await readFile(j.gold, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const q0 = gold.filter((g) => g.questionId === Q0);
    expect(q0.map((g) => g.label)).toEqual(['no', 'yes']);
    expect(q0[1].supersedes).toBe(q0[0].labeledAt);

    // The review says the same as calibrate: the latest line counts, no conflicting gold; and no "null".
    await b.press('Escape');
    await b.waitFor(`document.querySelectorAll('#windows tbody tr').length === 2`);
    await b.press('r');
    const review = await b.waitFor<string>(`document.querySelector('.review-question[data-question="${Q0}"]')?.textContent`);
    expect(review).toContain('n = 1');
    expect(review).toContain('No disagreements.');
    expect(await b.eval<string>(`document.querySelector('main').textContent`)).not.toMatch(/\bnull\b/);
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const reportPath = join(j.dataDir, 'report.json');
    expect(await calibrateCommand(['--gold', j.gold, '--ledger', j.ledger, '--dry-run', '--report', reportPath])).toBe(0);
    vi.restoreAllMocks();
    const report = JSON.parse(await readFile(reportPath, 'utf8'));
    expect(report.conflictingGold).toEqual([]);
    expect(
      report.questions.find((q: { target: { questionId: string; windowKind: string } }) => q.target.questionId === Q0 && q.target.windowKind === 'turn'),
    ).toMatchObject({ n: 1, agreement: 1, disagreements: [] });
    expect(b.console.filter((c) => c.startsWith('exception'))).toEqual([]);
  });
});
