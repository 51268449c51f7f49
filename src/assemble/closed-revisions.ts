import type { Step } from '../normalize/step.ts';
import type { AssemblerLimits } from './limits.ts';
import type { HeldContent } from './log-join.ts';
import type { Inherited } from './revision-inheritance.ts';
import { SpanDigests } from './span-digests.ts';

/** What is remembered of a closed trajectory revision under its key. */
export interface Retained {
  revision: number;
  /** `trace/span` → step, while kept for late spans. */
  steps: Map<string, Step> | undefined;
  /** Digests of the spans let go (this revision's and earlier ones'), until `maxRememberedSpanDigests`. */
  digests: SpanDigests | undefined;
  /** What every later revision inherits, kept as long as the key is remembered. */
  inherited: Inherited;
  traceIds: string[];
  bytes: number;
  closedAtMs: number;
  /** The partitions that fed it, so a revoked partition's replay starts it afresh. */
  partitions: number[] | undefined;
  /** Content events whose span had not arrived: kept with the steps, for a late span. */
  held: HeldContent | undefined;
}

/**
 * The closed revisions the assembler remembers, oldest first, under three bounds: steps kept
 * for late spans (`lateSpanWindowMs`, `maxRetainedBytes`), then only span digests
 * (`maxRememberedSpanDigests`), then only the revision number (`maxRememberedKeys`). Each step
 * down loses less than a span: a late duplicate is still recognized from its digest, and past
 * that a late span opens an honest `previous-revision-not-retained` revision.
 */
export class ClosedRevisions {
  readonly #limits: AssemblerLimits;
  /** Called for a key let go at `maxRememberedKeys`, so the caller can forget its traces. */
  readonly #onEvicted: (key: string, r: Retained) => void;
  readonly #closed = new Map<string, Retained>();
  /** The subset of `#closed` whose steps are still kept, oldest first. */
  readonly #withSteps = new Map<string, Retained>();
  /** The subset of `#closed` with span digests, oldest first; `#digestCount` spans in all. */
  readonly #withDigests = new Map<string, Retained>();
  #digestCount = 0;
  #retainedBytes = 0;

  constructor(limits: AssemblerLimits, onEvicted: (key: string, r: Retained) => void) {
    this.#limits = limits;
    this.#onEvicted = onEvicted;
  }

  /** Bytes of the steps kept for late spans. */
  get retainedBytes(): number {
    return this.#retainedBytes;
  }

  get(key: string): Retained | undefined {
    return this.#closed.get(key);
  }

  /** Every remembered key, oldest first; `forget` may be called while iterating. */
  entries(): MapIterator<[string, Retained]> {
    return this.#closed.entries();
  }

  /** Remembers `r` as the newest closed revision of `key`, its steps counted when `keepSteps`. */
  retain(key: string, r: Retained, keepSteps: boolean, nowMs: number): void {
    this.#closed.set(key, r);
    if (keepSteps) {
      this.#withSteps.set(key, r);
      this.#retainedBytes += r.bytes;
    }
    this.#rememberDigests(key, r);
    this.expire(nowMs);
  }

  /** Removes a remembered key's record and what it counts in the retention bounds. */
  forget(key: string, r: Retained): void {
    this.#closed.delete(key);
    if (this.#withSteps.delete(key)) this.#retainedBytes -= r.bytes;
    if (this.#withDigests.delete(key)) this.#digestCount -= r.digests!.size;
  }

  /** Lets go of retained steps past the late-span window or the byte bound, then of old keys. */
  expire(nowMs: number): void {
    const limits = this.#limits;
    for (const [key, r] of this.#withSteps) {
      const expired = nowMs - r.closedAtMs > limits.lateSpanWindowMs;
      if (!expired && this.#retainedBytes <= limits.maxRetainedBytes) break;
      const replaced = r.digests;
      r.digests = SpanDigests.of(r.steps!.values(), replaced);
      r.steps = undefined;
      r.held = undefined;
      this.#withSteps.delete(key);
      this.#retainedBytes -= r.bytes;
      this.#rememberDigests(key, r, replaced);
    }
    // Past the digest bound a late duplicate of the oldest keys' spans opens an honest revision
    // (`previous-revision-not-retained`) instead of being recognized.
    for (const [key, r] of this.#withDigests) {
      if (this.#digestCount <= limits.maxRememberedSpanDigests) break;
      this.#digestCount -= r.digests!.size;
      r.digests = undefined;
      this.#withDigests.delete(key);
    }
    while (this.#closed.size > limits.maxRememberedKeys) {
      const [key, r] = this.#closed.entries().next().value!;
      this.forget(key, r);
      this.#onEvicted(key, r);
    }
  }

  /** Counts `r`'s digests (set or replaced) in the `maxRememberedSpanDigests` bound, as the newest. */
  #rememberDigests(key: string, r: Retained, replaced?: SpanDigests): void {
    if (this.#withDigests.delete(key)) this.#digestCount -= replaced!.size;
    if (r.digests === undefined || r.digests.size === 0) return;
    this.#withDigests.set(key, r);
    this.#digestCount += r.digests.size;
  }
}
