import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TrajwatchError } from '../errors.ts';

const run = promisify(execFile);

/** Where a headless Chromium is looked for: TRAJWATCH_CHROMIUM, then Debian's package. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string | null {
  for (const p of [env.TRAJWATCH_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser']) if (p !== undefined && p !== '' && existsSync(p)) return p;
  return null;
}

/**
 * Renders an SVG to a PNG with a real headless Chromium (no native Node dependency, and text is
 * laid out by a real font engine). Throws a TrajwatchError saying what is missing when no
 * Chromium is installed or it fails.
 */
export async function svgToPng(svg: string, width: number, height: number, out: string): Promise<void> {
  const chromium = chromiumPath();
  if (chromium === null)
    throw new TrajwatchError("no headless Chromium to draw the PNG with: install Debian's chromium (apt-get install chromium) or set TRAJWATCH_CHROMIUM");
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-svg-'));
  try {
    const page = join(dir, 'chart.svg');
    await writeFile(page, svg);
    await run(
      chromium,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--hide-scrollbars',
        '--no-first-run',
        `--user-data-dir=${join(dir, 'profile')}`,
        `--window-size=${width},${height}`,
        `--screenshot=${out}`,
        `file://${page}`,
      ],
      { timeout: 60_000 },
    );
    if (!existsSync(out)) throw new TrajwatchError(`Chromium ran but wrote no ${out}`);
  } catch (err) {
    if (err instanceof TrajwatchError) throw err;
    throw new TrajwatchError(`Chromium could not draw the PNG: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
