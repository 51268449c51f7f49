/**
 * One JavaScript framework of the matrix as a test: run its scenario in-process against a
 * real `trajwatch serve` and the stand-in model (a stand-in for an LLM endpoint, which cannot
 * run here), and require the row to be as the script says. Each `js-*.test.ts` is this suite
 * applied to one entry of {@link JS_FRAMEWORKS}.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { writeMatrixDoc } from '../../../scripts/docs/framework-matrix-doc.ts';
import type { MatrixRow } from '../harness.ts';
import { FINAL_1, FINAL_2 } from '../stand-in-model.ts';
import { JS_FRAMEWORKS } from './frameworks.ts';
import { runJsFramework } from './js-harness.ts';

export function jsFrameworkSuite(id: string): void {
  const spec = JS_FRAMEWORKS.find((f) => f.id === id);
  if (spec === undefined) throw new Error(`no framework "${id}" in test/frameworks/js/frameworks.ts`);
  let row: MatrixRow | undefined;
  afterAll(async () => {
    if (row !== undefined) await writeMatrixDoc();
  });

  describe(`${spec.title} (${spec.instrumentation}) into a running serve`, () => {
    it('keeps both turns under one key, names every tool step, parses args, finds the repetition and the failed tool, and nothing else', async () => {
      const run = await runJsFramework(spec);
      row = run.row;
      // Soft: every cell's problem is reported, not only the first.
      // The framework played the script: each turn ended with the stand-in's final text.
      expect.soft(run.answers).toEqual([FINAL_1, FINAL_2]);
      // Closed by serve's quiet period, not by shutdown: absence claims were allowed to fire.
      expect
        .soft(run.trajectories.map((t) => ({ complete: t.complete, incompleteReasons: t.incompleteReasons })))
        .toEqual([{ complete: true, incompleteReasons: [] }]);
      expect.soft(row.problems, `${spec.id}: ${row.problems.join('\n')}`).toEqual([]);
    }, 120_000);
  });
}
