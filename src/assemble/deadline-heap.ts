/** A binary min-heap of (deadline, key). Each key is scheduled at most once by its owner. */
export class DeadlineHeap {
  #deadlines: number[] = [];
  #keys: string[] = [];

  get size(): number {
    return this.#keys.length;
  }

  push(deadlineMs: number, key: string): void {
    const d = this.#deadlines;
    const k = this.#keys;
    let i = k.length;
    d.push(deadlineMs);
    k.push(key);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (d[parent]! <= deadlineMs) break;
      d[i] = d[parent]!;
      k[i] = k[parent]!;
      i = parent;
    }
    d[i] = deadlineMs;
    k[i] = key;
  }

  /** The earliest deadline, or undefined when empty. */
  peekDeadline(): number | undefined {
    return this.#deadlines[0];
  }

  pop(): { deadlineMs: number; key: string } | undefined {
    const d = this.#deadlines;
    const k = this.#keys;
    if (k.length === 0) return undefined;
    const top = { deadlineMs: d[0]!, key: k[0]! };
    const lastD = d.pop()!;
    const lastK = k.pop()!;
    const n = k.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && d[r]! < d[l]! ? r : l;
        if (d[c]! >= lastD) break;
        d[i] = d[c]!;
        k[i] = k[c]!;
        i = c;
      }
      d[i] = lastD;
      k[i] = lastK;
    }
    return top;
  }
}
