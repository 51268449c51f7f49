import { describe, expect, it } from 'vitest';
import { cohensKappa } from '../../src/calibration/kappa.ts';

/** Pairs from a confusion table: rows gold, columns predicted. */
function table(cells: Record<string, Record<string, number>>): [string, string][] {
  const out: [string, string][] = [];
  for (const [g, row] of Object.entries(cells)) for (const [p, n] of Object.entries(row)) for (let i = 0; i < n; i++) out.push([g, p]);
  return out;
}

describe("Cohen's kappa on hand-computed tables", () => {
  it('2×2, 20/5/10/15: po = 0.7, pe = 0.5·0.6 + 0.5·0.4 = 0.5, κ = 0.4', () => {
    expect(cohensKappa(table({ yes: { yes: 20, no: 5 }, no: { yes: 10, no: 15 } }))).toBeCloseTo(0.4, 12);
  });

  it('four pairs: po = 0.75, pe = 0.5·0.25 + 0.5·0.75 = 0.5, κ = 0.5', () => {
    expect(
      cohensKappa([
        ['yes', 'yes'],
        ['no', 'no'],
        ['yes', 'no'],
        ['no', 'no'],
      ]),
    ).toBeCloseTo(0.5, 12);
  });

  it('a missing prediction is its own category and a disagreement: po = 0.75, pe = 0.375, κ = 0.6', () => {
    expect(
      cohensKappa([
        ['yes', 'yes'],
        ['no', 'no'],
        ['yes', '(missing)'],
        ['no', 'no'],
      ]),
    ).toBeCloseTo(0.6, 12);
  });

  it('3×3 perfect agreement is 1; agreement no better than chance is 0', () => {
    expect(cohensKappa(table({ yes: { yes: 3 }, no: { no: 4 }, unavailable: { unavailable: 2 } }))).toBe(1);
    // Marginals 0.5/0.5 on both sides, po = 0.5 = pe.
    expect(cohensKappa(table({ yes: { yes: 1, no: 1 }, no: { yes: 1, no: 1 } }))).toBe(0);
  });

  it('systematic disagreement is negative: 2×2 all off-diagonal, κ = -1', () => {
    expect(cohensKappa(table({ yes: { no: 5 }, no: { yes: 5 } }))).toBeCloseTo(-1, 12);
  });

  it('is null, never 0, for an empty sample and for one-class gold', () => {
    expect(cohensKappa([])).toBeNull();
    expect(cohensKappa(table({ yes: { yes: 9, no: 1 } }))).toBeNull();
  });
});
