import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { calibrateCommand } from '../../../src/cli/calibrate.ts';
import { CertificateSchema } from '../../../src/judge/certificate.ts';
import { SEMANTIC_QUESTIONS } from '../../../src/judge/questions.ts';
import { Browser, CHROMIUM } from '../../helpers/cdp.ts';
import { judgeWindows, serveLabels } from './label-fixture.ts';

// Labels windows through the page in Debian's real headless Chromium, by keyboard, as a
// reviewer would; then `trajwatch calibrate` reads the gold file the page wrote.

const Q0 = SEMANTIC_QUESTIONS[0]!.id;
const Q1 = SEMANTIC_QUESTIONS[1]!.id;
// Sixteen windows, half claiming done: sixteen agreeing labels put the lower bound of kappa's
// 95 % interval at 0.613 (Wilson, 16 of 16), the fewest that clear 0.6 (six would give 0.22).
const KEYS: [string, boolean][] = [...Array(16).keys()].map((i) => [`run-${String.fromCharCode(97 + i)}`, i % 2 === 0]);
const haveChromium = existsSync(CHROMIUM);
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Labels question 0 of every window through the page: yes when `yes(trajectoryKey)`. Question 1 of the first window: unsure. */
async function labelThroughPage(b: Browser, url: string, labeler: string, yes: (key: string) => boolean) {
  await b.goto(url);
  await b.waitFor(`document.activeElement?.id === 'labeler'`);
  await b.type(labeler);
  await b.press('Enter');
  await b.waitFor(`document.querySelectorAll('#windows tbody tr').length === ${KEYS.length}`);
  const rows = await b.eval<{ id: string; key: string }[]>(
    `[...document.querySelectorAll('#windows tbody tr')].map((r) => ({ id: r.dataset.window, key: r.children[2].textContent }))`,
  );
  for (let i = 0; i < rows.length; i++) {
    await b.waitFor(
      `document.querySelector('#windows tr[aria-current="true"]')?.dataset.window === ${JSON.stringify(rows[0]!.id)} && document.activeElement?.tagName === 'A'`,
    );
    for (let k = 0; k < i; k++) await b.press('j');
    await b.waitFor(`document.activeElement?.textContent === ${JSON.stringify(rows[i]!.id)}`);
    await b.press('Enter');
    await b.waitFor(`document.querySelector('#question-title')?.textContent.startsWith('Question 1 of 8: ${Q0}')`);
    // Blind: the judge's answer is not on the page before the label is recorded.
    expect(await b.eval<string>(`document.querySelector('#judge').textContent`)).toContain('hidden');
    // Each option names the key that picks it.
    expect(await b.eval<string[]>(`[...document.querySelectorAll('#label-form fieldset:first-of-type kbd')].map((k) => k.textContent)`)).toEqual([
      'y',
      'n',
      'u',
      'a',
    ]);
    await b.press(yes(rows[i]!.key) ? 'y' : 'n');
    await b.press('2'); // the second event: the tool call whose result makes the claim
    await b.waitFor(`document.querySelector('#support').value === 'e2' && document.querySelector('#event-e2').classList.contains('chosen')`);
    if (i === 0 && process.env.TRAJWATCH_LABEL_SCREENSHOT !== undefined) {
      const shot = (await b.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
      await writeFile(process.env.TRAJWATCH_LABEL_SCREENSHOT, Buffer.from(shot.data, 'base64'));
    }
    await b.press('Enter');
    await b.waitFor(`document.querySelector('#question-title')?.textContent.startsWith('Question 2 of 8: ${Q1}')`);
    const status = await b.eval<string>(`document.querySelector('#status').textContent`);
    expect(status).toContain(`Recorded ${Q0}`);
    expect(status).toMatch(/The judge answered "(yes|no)"/);
    if (i === 0) {
      await b.press('u');
      await b.press('Enter');
      await b.waitFor(`document.querySelector('#question-title')?.textContent.startsWith('Question 3 of 8')`);
    }
    await b.press('Escape');
    await b.waitFor(`document.querySelectorAll('#windows tbody tr').length === ${KEYS.length} && document.activeElement?.tagName === 'A'`);
  }
  return rows;
}

describe.skipIf(!haveChromium)('the labeling page in real headless Chromium', () => {
  it('labels windows by keyboard, blind; the gold it writes lets calibrate certify when it agrees with the judge and refuse when it does not', {
    timeout: 240_000,
  }, async () => {
    const b = await Browser.launch();
    cleanups.push(() => b.close());
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);

    for (const agree of [true, false]) {
      const j = await judgeWindows(KEYS);
      cleanups.push(() => j.model.close());
      const s = await serveLabels(j);
      cleanups.push(s.close);
      const done = new Map(KEYS);
      const rows = await labelThroughPage(b, s.url, agree ? 'reviewer-a' : 'reviewer-b', (key) => (agree ? done.get(key)! : !done.get(key)!));

      // Every label is in the gold file with its labeler, time, support and the window digest.
      const gold = (await readFile(j.gold, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(gold).toHaveLength(rows.length + 1);
      expect(
        gold
          .filter((g) => g.questionId === Q0)
          .every(
            (g) =>
              g.labeler === (agree ? 'reviewer-a' : 'reviewer-b') &&
              g.support === 'e2' &&
              /^[0-9a-f]{64}$/.test(g.windowDigest) &&
              !Number.isNaN(Date.parse(g.labeledAt)),
          ),
      ).toBe(true);
      expect(gold.find((g) => g.questionId === Q1)).toMatchObject({ label: 'unsure' });

      // The review, reached by keyboard, shows the same kappa calibrate computes.
      await b.press('r');
      const review = await b.waitFor<string>(`document.querySelector('.review-question[data-question="${Q0}"]')?.textContent`);
      expect(review).toContain(agree ? 'kappa = 1.000 (95 % interval 0.613 to 1.000)' : 'kappa = -1.000');
      expect(review).toContain(agree ? 'No disagreements.' : 'does not qualify');

      const certDir = join(j.dataDir, 'judge', 'certificates');
      const reportPath = join(j.dataDir, 'report.json');
      expect(await calibrateCommand(['--gold', j.gold, '--ledger', j.ledger, '--out', certDir, '--report', reportPath])).toBe(0);
      const report = JSON.parse(await readFile(reportPath, 'utf8')) as {
        questions: { target: { questionId: string }; n: number; kappa: number; qualifies: boolean; reasons: string[]; excludedGold: number }[];
      };
      const q0 = report.questions.find((q) => q.target.questionId === Q0)!;
      const q1 = report.questions.find((q) => q.target.questionId === Q1)!;
      expect(q1).toMatchObject({ n: 0, excludedGold: 1, qualifies: false });
      if (agree) {
        expect(q0).toMatchObject({ n: KEYS.length, kappa: 1, kappaInterval: { lower: expect.closeTo(0.613, 3) }, qualifies: true });
        const files = await readdir(certDir);
        expect(files).toHaveLength(1);
        expect(CertificateSchema.parse(JSON.parse(await readFile(join(certDir, files[0]!), 'utf8')))).toMatchObject({
          questionId: Q0,
          goldN: KEYS.length,
          kappa: 1,
        });
      } else {
        expect(q0).toMatchObject({ n: KEYS.length, kappa: -1, qualifies: false });
        expect(q0.reasons.join(' ')).toContain('below 0.6');
        expect(existsSync(certDir)).toBe(false);
      }
    }
    expect(b.console.filter((c) => c.startsWith('exception'))).toEqual([]);
  });
});
