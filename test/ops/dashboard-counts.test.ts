// A count of events over a range (increase() of a counter) is a whole number: Prometheus's
// increase() extrapolates to the range's edges and gives fractions (111.36 alarms), so every
// panel that shows one rounds it and shows no decimals. Cost and byte counters are not counts.
import { describe, expect, it } from 'vitest';
import { readShippedDashboards } from './shipped-dashboards.ts';

type Panel = { title: string; type: string; targets?: { expr: string }[]; fieldConfig?: { defaults?: { unit?: string; decimals?: number } } };

const NOT_COUNTS = /_(usd|bytes|seconds)_total|_(usd|bytes|seconds)\b/;

describe.each(readShippedDashboards().map((d) => [d.file, d.json.panels as Panel[]] as const))('%s', (_file, panels) => {
  const counts = panels.filter((p) => (p.targets ?? []).some((t) => t.expr.includes('increase(') && !NOT_COUNTS.test(t.expr)));

  it('rounds every count over a range and shows it without decimals', () => {
    for (const p of counts) {
      for (const t of p.targets ?? []) expect(t.expr, p.title).toMatch(/^(sort_desc\()?round\(/);
      if (p.type === 'stat') expect(p.fieldConfig?.defaults?.decimals, p.title).toBe(0);
    }
  });
});

it('the alarms dashboard has its "Alarms in range" count among them', () => {
  const alarms = readShippedDashboards().find((d) => d.file.includes('coordinator-alarms'))!;
  const panel = (alarms.json.panels as Panel[]).find((p) => p.title === 'Alarms in range')!;
  expect(panel.targets![0]!.expr).toMatch(/^round\(/);
  expect(panel.fieldConfig?.defaults?.decimals).toBe(0);
});
