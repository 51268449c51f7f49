/**
 * CPU-time measurement shared by the benchmarks. CPU time of this process (all threads, so
 * GC helpers count) rather than wall time, because the machine is shared; cases run
 * interleaved in several slices and each keeps its best slice, the one least disturbed.
 */

export interface Case {
  name: string;
  /** One round of work; may be async (e.g. waiting for a log to be durable). */
  run: () => unknown;
}

async function sliceRate(c: Case, seconds: number): Promise<number> {
  let rounds = 0;
  const stopAt = performance.now() + seconds * 1000;
  const cpuStart = process.cpuUsage();
  while (performance.now() < stopAt) {
    const r = c.run();
    if (r instanceof Promise) await r;
    rounds++;
  }
  const cpu = process.cpuUsage(cpuStart);
  return rounds / ((cpu.user + cpu.system) / 1e6);
}

/** Rounds per CPU-second of each case: best of `slices` interleaved slices after a warm-up. */
export async function measureCases(cases: readonly Case[], seconds: number, slices = 5): Promise<number[]> {
  for (const c of cases) await sliceRate(c, 0.3);
  const best = cases.map(() => 0);
  for (let s = 0; s < slices; s++) {
    for (const [i, c] of cases.entries()) best[i] = Math.max(best[i]!, await sliceRate(c, seconds / slices));
  }
  return best;
}

/** A Markdown table with right-aligned numeric columns from `numericFrom` on. */
export function markdownTable(header: string[], rows: string[][], numericFrom: number): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => (i >= numericFrom ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
