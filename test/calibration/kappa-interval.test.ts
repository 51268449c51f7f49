import { describe, expect, it } from 'vitest';
import { cohensKappa } from '../../src/calibration/kappa.ts';
import { KAPPA_INTERVAL_METHOD } from '../../src/judge/certificate.ts';
import { kappaInterval, labelsNeeded } from '../../src/calibration/kappa-interval.ts';

/** Pairs from a confusion table: rows gold, columns predicted. */
function table(cells: Record<string, Record<string, number>>): [string, string][] {
  const out: [string, string][] = [];
  for (const [g, row] of Object.entries(cells)) for (const [p, n] of Object.entries(row)) for (let i = 0; i < n; i++) out.push([g, p]);
  return out;
}

// SAS/STAT User's Guide, PROC FREQ, "Getting Started: Agreement study" (two dermatologists, 88
// patients): simple kappa 0.3449, ASE 0.0724, 95 % confidence limits 0.2030 and 0.4868 — the
// Fleiss–Cohen–Everitt large-sample variance that SAS uses.
const SKIN = table({
  terrible: { terrible: 10, poor: 4, marginal: 1, clear: 0 },
  poor: { terrible: 5, poor: 10, marginal: 12, clear: 2 },
  marginal: { terrible: 2, poor: 4, marginal: 12, clear: 5 },
  clear: { terrible: 0, poor: 2, marginal: 6, clear: 13 },
});

describe('the 95 % interval for kappa', () => {
  it("reproduces the SAS worked example's Fleiss–Cohen–Everitt interval: kappa 0.3449, ASE 0.0724, (0.2030, 0.4868)", () => {
    const i = kappaInterval(SKIN)!;
    expect(cohensKappa(SKIN)).toBeCloseTo(0.3449, 4);
    expect(i.se).toBeCloseTo(0.0724, 4);
    expect(i.fce.lower).toBeCloseTo(0.203, 4);
    expect(i.fce.upper).toBeCloseTo(0.4868, 4);
    // On this table the analytic interval is the wider: it is the interval.
    expect([i.lower, i.upper]).toEqual([i.fce.lower, i.fce.upper]);
    expect(i).toMatchObject({ level: 0.95, method: KAPPA_INTERVAL_METHOD });
  });

  it('does not collapse to a point at perfect agreement: n 5, kappa 1 has a lower bound far below 0.6 (the Wilson bound of the agreement)', () => {
    const five = table({ yes: { yes: 2 }, no: { no: 3 } });
    expect(cohensKappa(five)).toBe(1);
    const i = kappaInterval(five)!;
    expect(i.se).toBe(0); // the large-sample variance is 0 here: a Wald interval alone would say [1, 1]
    // Wilson lower bound of 5/5 agreement = 1 / (1 + 1.96²/5) = 0.5655; pe = 0.4² + 0.6² = 0.52.
    expect(i.wilson.lower).toBeCloseTo((1 / (1 + 1.959964 ** 2 / 5) - 0.52) / 0.48, 4);
    expect(i.lower).toBeCloseTo(0.0948, 3);
    expect(i.upper).toBe(1);
  });

  it('puts the reported case, n 5 and kappa 0.615, far below the minimum', () => {
    // Gold yes 3, no 2; the judge agrees on 4 of 5: po 0.8, pe 0.48, kappa = 0.32 / 0.52 = 0.615.
    const five = table({ yes: { yes: 2, no: 1 }, no: { no: 2 } });
    expect(cohensKappa(five)).toBeCloseTo(0.615, 3);
    expect(kappaInterval(five)!.lower).toBeLessThan(0);
  });

  it('is null when kappa is (empty, one-class gold), and always within [-1, 1] around kappa', () => {
    expect(kappaInterval([])).toBeNull();
    expect(kappaInterval(table({ yes: { yes: 9, no: 1 } }))).toBeNull();
    for (const t of [SKIN, table({ yes: { no: 5 }, no: { yes: 5 } }), table({ yes: { yes: 1, '(missing)': 1 }, no: { no: 3 } })]) {
      const k = cohensKappa(t)!;
      const i = kappaInterval(t)!;
      expect(i.lower).toBeGreaterThanOrEqual(-1);
      expect(i.upper).toBeLessThanOrEqual(1);
      expect(i.lower).toBeLessThanOrEqual(k);
      expect(i.upper).toBeGreaterThanOrEqual(k);
    }
  });
});

describe('how many labels the lower bound needs (an estimate at the observed proportions)', () => {
  it('perfect, balanced agreement needs about 16 labels for a lower bound of 0.6, and reaches it there', () => {
    const pairs = (n: number) => table({ yes: { yes: n / 2 }, no: { no: n / 2 } });
    const need = labelsNeeded(pairs(4), 0.6);
    expect(need).toEqual({ kind: 'estimate', total: 16 });
    expect(kappaInterval(pairs(16))!.lower).toBeGreaterThanOrEqual(0.6);
    expect(kappaInterval(pairs(14))!.lower).toBeLessThan(0.6);
  });

  it('says none suffices when the observed kappa is not above the minimum, and nothing when kappa is undefined', () => {
    expect(labelsNeeded(table({ yes: { yes: 2, no: 1 }, no: { no: 1, yes: 1 } }), 0.6)).toEqual({ kind: 'unreachable' });
    expect(labelsNeeded(table({ yes: { yes: 3 } }), 0.6)).toBeNull();
    // Already enough: the sample itself.
    expect(labelsNeeded(SKIN, 0.2)).toEqual({ kind: 'estimate', total: 88 });
  });

  it('grows with the distance between kappa and the minimum: the SAS table at kappa 0.345 needs thousands for 0.34', () => {
    const need = labelsNeeded(SKIN, 0.34);
    expect(need?.kind).toBe('estimate');
    expect((need as { total: number }).total).toBeGreaterThan(10_000);
  });
});
