/** Bits a key in each generation's filter, and probes per key: about 1 % false positives at capacity. */
const BITS_PER_KEY = 10;
const PROBES = 7;

interface Generation {
  bits: Uint8Array | undefined;
  count: number;
  /** The newest close among its keys: what the horizon becomes once the generation is dropped. */
  newestClosedAtMs: number;
}

/**
 * The keys (and trace ids) the closed-revision memory let go, as "maybe seen": a fixed-size
 * fingerprint filter in two generations of `capacity` keys each, and a horizon in time. A
 * filter has false positives, never false negatives; a false positive only ever marks a new
 * key's revision `previous-revision-unknown`, the safe direction. When the newer generation
 * fills, the older one is dropped and the horizon moves to the newest close it held: a span
 * that started at or before the horizon may belong to a key no longer known at all.
 * Memory: 2 × ⌈capacity × 10 / 8⌉ bytes, allocated on the first key let go.
 *
 * @example
 * const f = new ForgottenKeys(1_000_000);
 * f.add(['conv-1', traceId], closedAtMs);
 * f.has('conv-1'); // true
 */
export class ForgottenKeys {
  readonly #capacity: number;
  readonly #bits: number;
  #current: Generation = { bits: undefined, count: 0, newestClosedAtMs: -Infinity };
  #previous: Generation | undefined;
  #horizonMs = -Infinity;

  constructor(capacity: number) {
    this.#capacity = capacity;
    this.#bits = Math.max(8, capacity * BITS_PER_KEY);
  }

  /**
   * Spans that started at or before this time (ms, the clock the assembler is given) may belong
   * to a key forgotten beyond the filter; -Infinity while nothing was.
   */
  get horizonMs(): number {
    return this.#horizonMs;
  }

  /** Moves the horizon to `ms` if later (a memory cut or lost across a restart). */
  raiseHorizon(ms: number): void {
    if (ms > this.#horizonMs) this.#horizonMs = ms;
  }

  /** Remembers `names` (a key and its trace ids) as maybe seen, their revision closed at `closedAtMs`. */
  add(names: Iterable<string>, closedAtMs: number): void {
    if (this.#capacity === 0) return this.raiseHorizon(closedAtMs);
    for (const name of names) {
      if (this.#current.count >= this.#capacity) this.#rotate();
      const g = this.#current;
      g.bits ??= new Uint8Array(Math.ceil(this.#bits / 8));
      const [h1, h2] = hashes(name);
      for (let i = 0; i < PROBES; i++) {
        const bit = (h1 + Math.imul(i, h2)) >>> 0;
        const at = bit % this.#bits;
        g.bits[at >>> 3]! |= 1 << (at & 7);
      }
      g.count++;
      if (closedAtMs > g.newestClosedAtMs) g.newestClosedAtMs = closedAtMs;
    }
  }

  /** Whether `name` may have been let go (false positives possible, false negatives not, within the two generations). */
  has(name: string): boolean {
    if (this.#current.count === 0 && this.#previous === undefined) return false;
    const [h1, h2] = hashes(name);
    return inGeneration(this.#current, h1, h2, this.#bits) || (this.#previous !== undefined && inGeneration(this.#previous, h1, h2, this.#bits));
  }

  #rotate(): void {
    if (this.#previous !== undefined) this.raiseHorizon(this.#previous.newestClosedAtMs);
    this.#previous = this.#current;
    this.#current = { bits: undefined, count: 0, newestClosedAtMs: -Infinity };
  }
}

function inGeneration(g: Generation, h1: number, h2: number, bits: number): boolean {
  if (g.bits === undefined) return false;
  for (let i = 0; i < PROBES; i++) {
    const at = ((h1 + Math.imul(i, h2)) >>> 0) % bits;
    if ((g.bits[at >>> 3]! & (1 << (at & 7))) === 0) return false;
  }
  return true;
}

/** Two independent 32-bit hashes of a string (FNV-1a; a multiply-xorshift), the second odd. */
function hashes(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return [a >>> 0, (b | 1) >>> 0];
}
