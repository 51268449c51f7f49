import { summaryOf, type Text } from '../ingest/long-text.ts';
import { sha256Hex } from '../core/digest.ts';
import type { Step } from '../normalize/step.ts';

/**
 * What is remembered of spans whose steps were let go (past `lateSpanWindowMs`, above
 * `maxRetainedBytes`, or cut at the span bound): per span, a 64-bit hash of its `trace/span` id
 * and a 64-bit {@link spanFingerprint} of its payload, packed in one sorted typed array — 16
 * bytes a span instead of the step. Enough to recognize a late exact duplicate export (counted,
 * released, no new revision) and to tell a different payload under a known span id (a capture
 * conflict) from a new span.
 */
export class SpanDigests {
  /** Four words per span, sorted by id hash: idHi, idLo, fingerprintHi, fingerprintLo. */
  readonly #words: Uint32Array;

  private constructor(words: Uint32Array) {
    this.#words = words;
  }

  get size(): number {
    return this.#words.length / 4;
  }

  /** The digests of `steps` joined with those of `prior` (a span in both keeps `prior`'s, the first seen). */
  static of(steps: Iterable<Step>, prior?: SpanDigests): SpanDigests {
    const fresh: number[] = [];
    for (const step of steps) {
      const id = new Hash64().str(step.traceId).str(step.id);
      const fp = fingerprintOf(step);
      fresh.push(id.hi >>> 0, id.lo >>> 0, fp.hi >>> 0, fp.lo >>> 0);
    }
    const before = prior === undefined ? new Uint32Array(0) : prior.#words;
    const all = new Uint32Array(before.length + fresh.length);
    all.set(before);
    all.set(fresh, before.length);
    const n = all.length / 4;
    // Stable: on equal ids the prior (earlier) row comes first and is the one kept.
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => all[a * 4]! - all[b * 4]! || all[a * 4 + 1]! - all[b * 4 + 1]! || a - b);
    const words = new Uint32Array(all.length);
    let w = 0;
    for (const i of order) {
      if (w > 0 && words[w - 4] === all[i * 4] && words[w - 3] === all[i * 4 + 1]) continue;
      words.set(all.subarray(i * 4, i * 4 + 4), w);
      w += 4;
    }
    return new SpanDigests(w === words.length ? words : words.slice(0, w));
  }

  /** The digests as base64 of big-endian words (16 bytes a span): how the revision memory stores them. */
  toBase64(): string {
    const w = this.#words;
    const bytes = Buffer.allocUnsafe(w.length * 4);
    for (let i = 0; i < w.length; i++) bytes.writeUInt32BE(w[i]!, i * 4);
    return bytes.toString('base64');
  }

  /** Digests read back from {@link toBase64}; undefined when the text is not whole, sorted rows. */
  static fromBase64(text: string): SpanDigests | undefined {
    const bytes = Buffer.from(text, 'base64');
    if (bytes.length % 16 !== 0 || bytes.toString('base64') !== text) return undefined;
    const words = new Uint32Array(bytes.length / 4);
    for (let i = 0; i < words.length; i++) words[i] = bytes.readUInt32BE(i * 4);
    for (let r = 4; r < words.length; r += 4) {
      const h = words[r]!;
      const l = words[r + 1]!;
      if (h < words[r - 4]! || (h === words[r - 4]! && l <= words[r - 3]!)) return undefined;
    }
    return new SpanDigests(words);
  }

  /** The remembered fingerprint (16 hex, as {@link spanFingerprint}) of span `traceId/spanId`, if remembered. */
  fingerprintOf(traceId: string, spanId: string): string | undefined {
    const id = new Hash64().str(traceId).str(spanId);
    const hi = id.hi >>> 0;
    const lo = id.lo >>> 0;
    const w = this.#words;
    let low = 0;
    let high = w.length / 4 - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const h = w[mid * 4]!;
      const l = w[mid * 4 + 1]!;
      if (h === hi && l === lo) return hex8(w[mid * 4 + 2]!) + hex8(w[mid * 4 + 3]!);
      if (h < hi || (h === hi && l < lo)) low = mid + 1;
      else high = mid - 1;
    }
    return undefined;
  }
}

/**
 * sha256 hex of a step's whole payload: what two live steps under one span id are compared by
 * (computed only when two spans share an id).
 */
export function stepDigest(step: Step): string {
  const json = JSON.stringify(step, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return sha256Hex(json);
}

/**
 * A 64-bit fingerprint (16 hex) of a step's payload, cheap enough to take of every span let go:
 * every scalar field, the span's encoded size (which any change of an attribute's length moves),
 * the arguments' digest (64 bits of it), and of the result, input and error texts their length
 * and first and last 32 characters. An exporter's retry sends
 * the same span byte for byte, so it matches; a different payload differs in one of these in all
 * but contrived cases. The price of not hashing whole payloads: two payloads of the same encoded
 * size that differ only inside an attribute value or a long text, compared after the first was
 * let go, are taken as duplicates.
 */
export function spanFingerprint(step: Step): string {
  const fp = fingerprintOf(step);
  return hex8(fp.hi >>> 0) + hex8(fp.lo >>> 0);
}

function fingerprintOf(step: Step): Hash64 {
  return new Hash64()
    .str(step.name)
    .str(step.kind)
    .num(step.statusCode)
    .str(step.startTimeUnixNano.toString())
    .str(step.endTimeUnixNano.toString())
    .num(step.encodedBytes)
    .opt(step.parentId)
    .opt(step.toolName)
    .opt(step.toolCallId)
    .opt(step.args?.digest.slice(0, 16))
    .text(step.result)
    .text(step.input)
    .opt(step.error?.source)
    .opt(step.error?.type)
    .text(step.error?.message)
    .opt(step.model)
    .opt(step.agentName)
    .opt(step.sessionId)
    .num(step.eventNames.length);
}

/** Two 32-bit lanes (FNV-1a and a multiply-xorshift), fed field by field with separators. */
class Hash64 {
  hi = 0x811c9dc5;
  lo = 0x9747b28c;

  str(s: string): this {
    let hi = this.hi;
    let lo = this.lo;
    for (let i = 0; i <= s.length; i++) {
      const c = i === s.length ? 0x1f : s.charCodeAt(i);
      hi = Math.imul(hi ^ c, 0x01000193);
      lo = Math.imul(lo ^ c, 0x5bd1e995);
      lo ^= lo >>> 15;
    }
    this.hi = hi;
    this.lo = lo;
    return this;
  }

  num(n: number): this {
    return this.str(String(n));
  }

  /** Absent is distinct from empty. */
  opt(s: string | undefined): this {
    return this.str(s === undefined ? '\u001e' : `=${s}`);
  }

  /** Length, head and tail of a text; absent is distinct from empty. A long text's come from its summary (no decode). */
  text(t: Text | undefined): this {
    if (t === undefined) return this.opt(undefined);
    const { length, head, tail } = summaryOf(t);
    this.num(length);
    return tail === '' ? this.str(head) : this.str(head).str(tail);
  }
}

function hex8(word: number): string {
  return word.toString(16).padStart(8, '0');
}
