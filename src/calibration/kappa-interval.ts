/**
 * A 95 % interval for Cohen's kappa, and how many labels its lower bound would need: what a
 * certificate is issued on (the lower bound must reach the minimum kappa), so a handful of
 * labels that happen to agree cannot certify a question. Pure and deterministic.
 *
 * The interval is the wider of two:
 * - **Fleiss–Cohen–Everitt (1969)**: kappa ± z·SE with the large-sample variance of kappa
 *   (Fleiss, Levin & Paik, *Statistical Methods for Rates and Proportions*, 3rd ed., §18.1;
 *   what SAS PROC FREQ reports as the ASE and confidence limits of the simple kappa).
 * - **Wilson, on the observed agreement**: the Wilson score interval of po, mapped to kappa as
 *   (po − pe)/(1 − pe) at the observed chance agreement pe. The large-sample variance is 0 at
 *   perfect agreement (and near 0 close to it), so a Wald interval alone says [1, 1] after five
 *   agreeing labels; Wilson's interval of a proportion does not collapse at the boundary.
 *
 * At and near perfect agreement on small samples the second is much the wider; elsewhere the
 * two are close (Wilson's is skewed toward po = ½, so either may be the lower) and the wider
 * is used: certification never rests on the narrower of two standard intervals.
 */

import { KAPPA_INTERVAL_LEVEL, KAPPA_INTERVAL_METHOD } from '../judge/certificate.ts';

/** Two-sided 95 %: the standard normal quantile at 0.975. */
const Z = 1.959963984540054;

export interface KappaInterval {
  level: typeof KAPPA_INTERVAL_LEVEL;
  method: typeof KAPPA_INTERVAL_METHOD;
  /** The bounds certification reads: the wider of the two intervals, within [-1, 1]. */
  lower: number;
  upper: number;
  /** The large-sample standard error of kappa (Fleiss–Cohen–Everitt). */
  se: number;
  fce: { lower: number; upper: number };
  wilson: { lower: number; upper: number };
}

/** The proportions of a confusion table: what the interval depends on besides n. */
interface Table {
  n: number;
  cats: string[];
  /** p[i][j]: share of pairs with gold cats[i] and predicted cats[j]. */
  p: number[][];
  rows: number[];
  cols: number[];
  po: number;
  pe: number;
  kappa: number;
}

function tableOf(pairs: readonly (readonly [string, string])[]): Table | null {
  const n = pairs.length;
  if (n === 0) return null;
  const cats = [...new Set(pairs.flat())].sort();
  const at = new Map(cats.map((c, i) => [c, i]));
  const p = cats.map(() => cats.map(() => 0));
  for (const [g, q] of pairs) p[at.get(g)!]![at.get(q)!]! += 1 / n;
  const rows = p.map((r) => r.reduce((s, x) => s + x, 0));
  const cols = cats.map((_, j) => p.reduce((s, r) => s + r[j]!, 0));
  if (rows.filter((r) => r > 0).length < 2) return null; // one-class gold: kappa undefined
  const po = cats.reduce((s, _, i) => s + p[i]![i]!, 0);
  const pe = cats.reduce((s, _, i) => s + rows[i]! * cols[i]!, 0);
  if (pe >= 1) return null;
  return { n, cats, p, rows, cols, po, pe, kappa: (po - pe) / (1 - pe) };
}

const clamp = (x: number) => Math.min(1, Math.max(-1, x));

/** The interval of a table's proportions at sample size n (n need not be the table's own). */
function intervalAt(t: Table, n: number): KappaInterval {
  const { p, rows, cols, po, pe, kappa: k } = t;
  let a = 0;
  let b = 0;
  for (let i = 0; i < p.length; i++) {
    a += p[i]![i]! * (1 - (rows[i]! + cols[i]!) * (1 - k)) ** 2;
    for (let j = 0; j < p.length; j++) if (i !== j) b += p[i]![j]! * (cols[i]! + rows[j]!) ** 2;
  }
  b *= (1 - k) ** 2;
  const c = (k - pe * (1 - k)) ** 2;
  // A + B − C is 0 at perfect agreement; rounding may take it a hair below.
  const se = Math.sqrt(Math.max(0, a + b - c) / (n * (1 - pe) ** 2));
  const fce = { lower: clamp(k - Z * se), upper: clamp(k + Z * se) };
  const z2 = Z * Z;
  const centre = po + z2 / (2 * n);
  const half = Z * Math.sqrt((po * (1 - po)) / n + z2 / (4 * n * n));
  const toKappa = (x: number) => clamp((x - pe) / (1 - pe));
  const wilson = { lower: toKappa((centre - half) / (1 + z2 / n)), upper: toKappa((centre + half) / (1 + z2 / n)) };
  return {
    level: KAPPA_INTERVAL_LEVEL,
    method: KAPPA_INTERVAL_METHOD,
    lower: Math.min(fce.lower, wilson.lower),
    upper: Math.max(fce.upper, wilson.upper),
    se,
    fce,
    wilson,
  };
}

/**
 * The 95 % interval for the kappa of these (gold, predicted) pairs, counted as `cohensKappa`
 * counts them; null whenever kappa is (empty sample, one-class gold).
 *
 * @example kappaInterval(Array(16).fill(['yes','yes']).concat(Array(16).fill(['no','no']))).lower // 0.78…
 */
export function kappaInterval(pairs: readonly (readonly [gold: string, predicted: string])[]): KappaInterval | null {
  const t = tableOf(pairs);
  return t === null ? null : intervalAt(t, t.n);
}

/** The largest sample the estimate searches: beyond it, the answer is "unreachable" in practice. */
export const MAX_LABELS_ESTIMATE = 1_000_000;

export type LabelsNeeded = { kind: 'estimate'; total: number } | { kind: 'unreachable' };

/**
 * An estimate, not a promise: how many labelled pairs in all the lower bound would need to
 * reach `minKappa` if kappa and the shares of the confusion table stayed as observed (the
 * bound rises with n at fixed shares). `unreachable` when the observed kappa is not above the
 * minimum (no sample size lifts the bound past kappa itself) or the search bound is passed; null
 * when kappa is undefined. Never fewer than the labels already there.
 */
export function labelsNeeded(pairs: readonly (readonly [string, string])[], minKappa: number): LabelsNeeded | null {
  const t = tableOf(pairs);
  if (t === null) return null;
  if (t.kappa <= minKappa) return { kind: 'unreachable' };
  const reaches = (n: number) => intervalAt(t, n).lower >= minKappa;
  if (reaches(t.n)) return { kind: 'estimate', total: t.n };
  let lo = t.n;
  let hi = t.n;
  while (!reaches(hi)) {
    lo = hi;
    hi *= 2;
    if (hi > MAX_LABELS_ESTIMATE) return reaches(MAX_LABELS_ESTIMATE) ? search(lo, MAX_LABELS_ESTIMATE, reaches) : { kind: 'unreachable' };
  }
  return search(lo, hi, reaches);
}

/** The least n in (lo, hi] that reaches, given that hi does and lo does not. */
function search(lo: number, hi: number, reaches: (n: number) => boolean): LabelsNeeded {
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (reaches(mid)) hi = mid;
    else lo = mid;
  }
  return { kind: 'estimate', total: hi };
}
