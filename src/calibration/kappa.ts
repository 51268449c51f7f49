/**
 * Cohen's kappa of paired nominal labels: (po − pe) / (1 − pe), with po the observed agreement
 * and pe the agreement expected from each rater's marginals. Null, never a number, for an
 * empty sample, for gold of a single class, and whenever pe = 1 (kappa is undefined there).
 *
 * @example cohensKappa([['yes','yes'],['no','no'],['yes','no'],['no','no']]) // 0.5
 */
export function cohensKappa(pairs: readonly (readonly [gold: string, predicted: string])[]): number | null {
  const n = pairs.length;
  if (n === 0) return null;
  const gold = new Map<string, number>();
  const pred = new Map<string, number>();
  let agree = 0;
  for (const [g, p] of pairs) {
    gold.set(g, (gold.get(g) ?? 0) + 1);
    pred.set(p, (pred.get(p) ?? 0) + 1);
    if (g === p) agree++;
  }
  if (gold.size < 2) return null;
  let pe = 0;
  for (const [c, k] of gold) pe += (k / n) * ((pred.get(c) ?? 0) / n);
  if (pe >= 1) return null;
  return (agree / n - pe) / (1 - pe);
}
