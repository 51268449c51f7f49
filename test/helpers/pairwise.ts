/**
 * A small deterministic pairwise (2-way) covering-array generator for configuration matrices.
 *
 * Every combination the constraints allow is enumerated (the full product, in factor order,
 * first factor slowest); a pair of levels of two factors must be covered when some allowed
 * combination holds it. The subset is built greedily: each step takes the allowed combination
 * covering the most pairs not yet covered, the earliest in enumeration order on a tie (AETG's
 * greedy step, without its randomness). The result is a fixed list for fixed factors: a test
 * can name its combinations in its output and CI reruns exactly the same ones.
 *
 * @example
 * const m = pairwise({ judge: ['off', 'on'], walk: ['off', 'on'] }, (c) => c.walk === 'off' || c.judge === 'on');
 * m.combinations // [{ judge: 'off', walk: 'off' }, { judge: 'on', walk: 'off' }, { judge: 'on', walk: 'on' }]
 */

/** Factor name → its levels. */
export type Factors = Readonly<Record<string, readonly string[]>>;

/** One level per factor. */
export type Combination<F extends Factors> = { readonly [K in keyof F]: F[K][number] };

export interface PairwiseMatrix<F extends Factors> {
  /** The subset to run: every coverable pair of levels appears in at least one. */
  combinations: Combination<F>[];
  /** Combinations in the full product, allowed or not. */
  fullProduct: number;
  /** Combinations the constraints allow. */
  allowed: number;
  /** Pairs of levels some allowed combination holds (all of them covered by `combinations`). */
  pairs: number;
}

/** The key of one pair of levels, `factorA=level|factorB=level` with the factors in declaration order. */
function pairKeys(names: readonly string[], combo: Record<string, string>): string[] {
  const keys: string[] = [];
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      keys.push(`${names[i]}=${combo[names[i]!]}|${names[j]}=${combo[names[j]!]}`);
    }
  }
  return keys;
}

/** Every combination of `factors`, first factor slowest. */
function product<F extends Factors>(factors: F): Combination<F>[] {
  let out: Record<string, string>[] = [{}];
  for (const [name, levels] of Object.entries(factors)) {
    if (levels.length === 0) throw new Error(`pairwise: factor ${name} has no levels`);
    out = out.flatMap((partial) => levels.map((level) => ({ ...partial, [name]: level })));
  }
  return out as Combination<F>[];
}

/** The pairs of levels `combinations` cover (keys as {@link pairKeys} writes them). */
export function coveredPairs<F extends Factors>(factors: F, combinations: readonly Combination<F>[]): Set<string> {
  const names = Object.keys(factors);
  return new Set(combinations.flatMap((c) => pairKeys(names, c as Record<string, string>)));
}

/** A pairwise-covering subset of the combinations `allowed` accepts (see the file's comment). */
export function pairwise<F extends Factors>(factors: F, allowed: (c: Combination<F>) => boolean = () => true): PairwiseMatrix<F> {
  const names = Object.keys(factors);
  const all = product(factors);
  const candidates = all.filter(allowed).map((c) => ({ c, keys: pairKeys(names, c as Record<string, string>) }));
  if (candidates.length === 0) throw new Error('pairwise: the constraints allow no combination');
  const uncovered = new Set(candidates.flatMap((x) => x.keys));
  const pairs = uncovered.size;
  const combinations: Combination<F>[] = [];
  while (uncovered.size > 0) {
    let best = candidates[0]!;
    let bestGain = -1;
    for (const x of candidates) {
      const gain = x.keys.filter((k) => uncovered.has(k)).length;
      if (gain > bestGain) {
        best = x;
        bestGain = gain;
      }
    }
    combinations.push(best.c);
    for (const k of best.keys) uncovered.delete(k);
  }
  return { combinations, fullProduct: all.length, allowed: candidates.length, pairs };
}
