/** Sorted, distinct integers as inclusive ranges: [1,2,3,7] → [[1,3],[7,7]]. */
export function toRanges(sorted: readonly number[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const n of sorted) {
    const last = ranges.at(-1);
    if (last !== undefined && n === last[1] + 1) last[1] = n;
    else ranges.push([n, n]);
  }
  return ranges;
}

/** Inclusive integer ranges with membership tests (ack logs are mostly contiguous runs). */
export class RangeSet {
  #ranges: [number, number][] = [];
  #normalized = true;

  add(from: number, to: number): void {
    this.#ranges.push([from, to]);
    this.#normalized = false;
  }

  has(n: number): boolean {
    if (!this.#normalized) this.#normalize();
    let lo = 0;
    let hi = this.#ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [from, to] = this.#ranges[mid]!;
      if (n < from) hi = mid - 1;
      else if (n > to) lo = mid + 1;
      else return true;
    }
    return false;
  }

  /** Sorts and merges overlapping or adjacent ranges, so one binary search answers `has`. */
  #normalize(): void {
    const sorted = this.#ranges.sort((a, b) => a[0] - b[0]);
    const merged: [number, number][] = [];
    for (const [from, to] of sorted) {
      const last = merged.at(-1);
      if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to);
      else merged.push([from, to]);
    }
    this.#ranges = merged;
    this.#normalized = true;
  }
}
