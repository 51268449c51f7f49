/** UTF-16 code unit order: `Array#sort`'s default for strings, and the order RFC 8785 asks for. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Arrays up to this length are insertion-sorted; longer ones go to `Array#sort`. */
const SMALL = 16;

/**
 * Sorts `items` in place, stably, and returns it. Short arrays, the common case on the hot
 * path (an object's keys, a trajectory's steps), are insertion-sorted: `Array#sort` allocates
 * a work array on every call, which was a tenth of the pipeline's garbage.
 */
export function sortSmall<T>(items: T[], compare: (a: T, b: T) => number): T[] {
  if (items.length > SMALL) return items.sort(compare);
  for (let i = 1; i < items.length; i++) {
    const item = items[i]!;
    let j = i - 1;
    while (j >= 0 && compare(items[j]!, item) > 0) {
      items[j + 1] = items[j]!;
      j--;
    }
    items[j + 1] = item;
  }
  return items;
}
