/**
 * One framework of the matrix as a test: build its pinned venv, run its scenario against a
 * real `trajwatch serve` and the stand-in model (a stand-in for an LLM endpoint, which cannot
 * run here), and require the row to be as the script says. Each framework's test file is
 * this suite applied to one entry of {@link FRAMEWORKS}.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeMatrixDoc } from '../../scripts/docs/framework-matrix-doc.ts';
import { FRAMEWORKS } from './frameworks.ts';
import { type MatrixRow, runFramework } from './harness.ts';

const run = promisify(execFile);
const ENV_SCRIPT = new URL('../../scripts/setup/framework-envs.sh', import.meta.url).pathname;
/** A cold venv build (downloads from PyPI) with room to spare; a warm one returns at once. */
const VENV_BUILD_TIMEOUT_MS = 900_000;

export function frameworkSuite(id: string): void {
  const spec = FRAMEWORKS.find((f) => f.id === id);
  if (spec === undefined) throw new Error(`no framework "${id}" in test/frameworks/frameworks.ts`);
  let python: string;
  let row: MatrixRow | undefined;
  beforeAll(async () => {
    // No skip: a venv that cannot be built fails the test, on a developer's machine and in CI.
    const { stdout } = await run('bash', [ENV_SCRIPT, spec.venv], { timeout: VENV_BUILD_TIMEOUT_MS, maxBuffer: 16 << 20 });
    python = stdout.trim().split('\n').at(-1)!.split('=').slice(1).join('=');
  }, VENV_BUILD_TIMEOUT_MS);
  afterAll(async () => {
    if (row !== undefined) await writeMatrixDoc();
  });

  describe(`${spec.title} (${spec.instrumentation}) into a running serve`, () => {
    it('keeps both turns under one key, names every tool step, parses args, finds the repetition and the failed tool, and nothing else', async () => {
      row = await runFramework(spec, python);
      expect(row.problems, `${spec.id}: ${row.problems.join('\n')}`).toEqual([]);
    }, 300_000);
  });
}
