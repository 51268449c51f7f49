/** The performance targets as a table: each figure against its bound, marked met or not met. */
import { markdownTable } from './measure.ts';

export interface Target {
  target: string;
  /** The measured figure; undefined when this run could not measure it. */
  value: number | undefined;
  atLeast?: number;
  atMost?: number;
  /** `MB` is MiB; `open` counts open trajectories. */
  unit: '×' | 'ms' | 'B' | 'MB' | 'open';
  /** Measured on less than the target names (the in-repo TRAIL traces only). */
  partial?: boolean;
}

export function targetStatus(t: Target): 'met' | 'not met' | 'not measured' {
  if (t.value === undefined || !Number.isFinite(t.value)) return 'not measured';
  const met = (t.atLeast === undefined || t.value >= t.atLeast) && (t.atMost === undefined || t.value <= t.atMost);
  return met ? 'met' : 'not met';
}

function figure(t: Target): string {
  if (t.value === undefined || !Number.isFinite(t.value)) return '–';
  // One more digit where rounding would show the bound itself for a figure on the other side of it.
  const bound = t.atLeast ?? t.atMost ?? Number.NaN;
  const n = t.unit === '×' ? t.value.toFixed(Math.abs(t.value - bound) < 0.005 ? 3 : 2) : t.unit === 'ms' ? t.value.toFixed(1) : t.value.toFixed(0);
  if (t.unit === 'open') return `${Number(n).toLocaleString('en-US')} open`;
  return t.unit === '×' ? `${n} ×` : `${n} ${t.unit}`;
}

export function targetsTable(targets: readonly Target[]): string {
  const rows = targets.map((t) => {
    const status = targetStatus(t);
    return [t.target, figure(t), t.partial && status !== 'not measured' ? `${status} (in-repo traces only: not measured on the full corpus)` : `**${status}**`];
  });
  return markdownTable(['target', 'measured', 'status'], rows, 1);
}
