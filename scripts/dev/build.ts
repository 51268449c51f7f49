/**
 * Builds the package's JavaScript: src/ to dist/ with tsc (tsconfig.build.json), from a clean
 * dist/ so a file removed from src/ never lingers in the package. Run by `prepack`, so
 * `npm pack` and `npm publish` always ship what src/ says. The .ts sources stay the source of
 * truth; tests and a checkout run them directly.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
rmSync(new URL('../../dist', import.meta.url), { recursive: true, force: true });
execFileSync(process.execPath, [fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
});
// What tsc does not emit but the code reads at run time (the labeling page's static files):
// every non-TypeScript file under src/ except the folders' READMEs, at the same path.
cpSync(new URL('../../src', import.meta.url), new URL('../../dist', import.meta.url), {
  recursive: true,
  filter: (from) => !from.endsWith('.ts') && !from.endsWith('README.md'),
});
