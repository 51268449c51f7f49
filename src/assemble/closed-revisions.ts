import type { PositionFloor } from '../ingest/pipeline-input.ts';
import type { Step } from '../normalize/step.ts';
import type { CloseCause } from './close-revision.ts';
import { ForgottenKeys } from './forgotten-keys.ts';
import type { AssemblerLimits } from './limits.ts';
import { OldestFirst } from './oldest-first.ts';
import type { HeldContent } from './log-join.ts';
import type { OpenBuffer } from './open-buffer.ts';
import type { Inherited } from './revision-inheritance.ts';
import type { RememberedRevision } from './revision-memory.ts';
import { SpanDigests, spanFingerprint, stepDigest } from './span-digests.ts';

/** What is remembered of a closed trajectory revision under its key. */
export interface Retained {
  revision: number;
  /** `trace/span` → step, while kept for late spans. */
  steps: Map<string, Step> | undefined;
  /** Digests of the spans let go (this revision's and earlier ones'), until `maxRememberedSpanDigests`. */
  digests: SpanDigests | undefined;
  /** The digests of `steps` joined with `digests`, when already taken (for the revision memory): used when the steps are let go. */
  digestsWithSteps?: SpanDigests | undefined;
  /** What every later revision inherits, kept as long as the key is remembered. */
  inherited: Inherited;
  traceIds: string[];
  bytes: number;
  closedAtMs: number;
  /** The partitions that fed it, so a revoked partition's replay starts it afresh. */
  partitions: number[] | undefined;
  /** While its steps are kept: the lowest position per partition that fed them (their long texts may lie there). */
  positions?: PositionFloor | undefined;
  /** Content events whose span had not arrived: kept with the steps, for a late span. */
  held: HeldContent | undefined;
}

/**
 * What a revision closed from `buffer` leaves behind: its steps, for late spans, unless it was
 * cut at its span bound or holds more than `maxRetainedBytes` (then only its spans' digests).
 * `digestAll`: a revision memory stores every span's digest now, so they are taken once here
 * and kept for when the steps are let go. `keepSteps` says which it is.
 */
export function retainedOf(
  buffer: OpenBuffer,
  closed: { inherited: Inherited; traceIds: string[]; cause: CloseCause; nowMs: number },
  limits: AssemblerLimits,
  digestAll: boolean,
): { retained: Retained; keepSteps: boolean } {
  // A trajectory cut at its span bound is not kept whole: its next revision starts afresh.
  const keepSteps = closed.cause !== 'span-limit' && buffer.bytes <= limits.maxRetainedBytes;
  const retained: Retained = {
    revision: buffer.revision,
    steps: keepSteps ? buffer.steps : undefined,
    digests: keepSteps ? buffer.previous : SpanDigests.of(buffer.steps.values(), buffer.previous),
    digestsWithSteps: keepSteps && digestAll ? SpanDigests.of(buffer.steps.values(), buffer.previous) : undefined,
    inherited: closed.inherited,
    traceIds: closed.traceIds,
    bytes: buffer.bytes,
    closedAtMs: closed.nowMs,
    partitions: buffer.positions === undefined ? undefined : [...buffer.positions.keys()],
    positions: keepSteps ? buffer.positions : undefined,
    held: keepSteps && buffer.held?.isEmpty() === false ? buffer.held : undefined,
  };
  return { retained, keepSteps };
}

/**
 * The closed revisions the assembler remembers, oldest first, under three bounds: steps kept
 * for late spans (`lateSpanWindowMs`, `maxRetainedBytes`), then only span digests
 * (`maxRememberedSpanDigests`), then only the revision number (`maxRememberedKeys`). Each step
 * down loses less than a span: a late duplicate is still recognized from its digest, and past
 * that a late span opens an honest `previous-revision-not-retained` revision. A key let go at
 * `maxRememberedKeys` goes into {@link ForgottenKeys}: a span of it, or one that started before
 * the filter's horizon, opens a `previous-revision-unknown` revision, never a "first" one.
 */
export class ClosedRevisions {
  readonly #limits: AssemblerLimits;
  /** Called for a key let go at `maxRememberedKeys`, so the caller can forget its traces. */
  readonly #onEvicted: (key: string, r: Retained) => void;
  readonly #closed = new OldestFirst<string, Retained>();
  /** The subset of `#closed` whose steps are still kept, oldest first. */
  readonly #withSteps = new OldestFirst<string, Retained>();
  /** The subset of `#closed` with span digests, oldest first; `#digestCount` spans in all. */
  readonly #withDigests = new OldestFirst<string, Retained>();
  #digestCount = 0;
  #retainedBytes = 0;
  readonly #forgotten: ForgottenKeys;

  constructor(limits: AssemblerLimits, onEvicted: (key: string, r: Retained) => void) {
    this.#limits = limits;
    this.#onEvicted = onEvicted;
    this.#forgotten = new ForgottenKeys(limits.maxForgottenKeys);
  }

  /** Spans that started at or before this (ms) may belong to a key no longer known; -Infinity when none can. */
  get horizonMs(): number {
    return this.#forgotten.horizonMs;
  }

  /**
   * Whether a span of trace `traceId`, under a key not remembered, that started at `startMs`
   * may belong to a revision closed before: its key or trace was let go, or it is older than
   * the horizon (with {@link CLOCK_SKEW_ALLOWANCE_MS} for the sender's clock).
   */
  mayHaveSeen(key: string, traceId: string, startMs: number | undefined): boolean {
    const horizon = this.#forgotten.horizonMs;
    if (startMs !== undefined && startMs <= horizon + CLOCK_SKEW_ALLOWANCE_MS) return true;
    return this.#forgotten.has(key) || (traceId !== key && this.#forgotten.has(traceId));
  }

  /** The memory was cut or lost up to `ms` (a restart): what closed before it is not known. */
  raiseHorizon(ms: number): void {
    this.#forgotten.raiseHorizon(ms);
  }

  /** Takes a revision remembered across a restart as the newest of its key (no steps: only its digests). */
  restore(r: RememberedRevision): void {
    const { key, ...kept } = r;
    const before = this.#closed.get(key);
    if (before !== undefined) this.forget(key, before);
    this.retain(key, { ...kept, steps: undefined, bytes: 0, held: undefined }, false, r.closedAtMs);
  }

  /** The lowest position of `partition` that fed a revision whose steps are kept; undefined when none. */
  referencedFrom(partition: number): number | undefined {
    let lowest: number | undefined;
    for (const [, r] of this.#withSteps.entries()) {
      const at = r.positions?.get(partition);
      if (at !== undefined && (lowest === undefined || at < lowest)) lowest = at;
    }
    return lowest;
  }

  /** Bytes of the steps kept for late spans. */
  get retainedBytes(): number {
    return this.#retainedBytes;
  }

  get(key: string): Retained | undefined {
    return this.#closed.get(key);
  }

  /** Whether `step` is an exact copy of a span of `key`'s closed revision (its kept step, or its remembered digest). */
  holdsDuplicate(key: string, step: Step): boolean {
    const r = this.#closed.get(key);
    if (r === undefined) return false;
    const kept = r.steps?.get(`${step.traceId}/${step.id}`);
    if (kept !== undefined) return stepDigest(kept) === stepDigest(step);
    const remembered = r.digests?.fingerprintOf(step.traceId, step.id);
    return remembered !== undefined && remembered === spanFingerprint(step);
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
    for (let e = this.#withSteps.oldest(); e !== undefined; e = this.#withSteps.oldest()) {
      const [key, r] = e;
      const expired = nowMs - r.closedAtMs > limits.lateSpanWindowMs;
      if (!expired && this.#retainedBytes <= limits.maxRetainedBytes) break;
      const replaced = r.digests;
      r.digests = r.digestsWithSteps ?? SpanDigests.of(r.steps!.values(), replaced);
      r.digestsWithSteps = undefined;
      r.steps = undefined;
      r.held = undefined;
      r.positions = undefined;
      this.#withSteps.delete(key);
      this.#retainedBytes -= r.bytes;
      this.#rememberDigests(key, r, replaced);
    }
    // Past the digest bound a late duplicate of the oldest keys' spans opens an honest revision
    // (`previous-revision-not-retained`) instead of being recognized.
    for (let e = this.#withDigests.oldest(); e !== undefined; e = this.#withDigests.oldest()) {
      const [key, r] = e;
      if (this.#digestCount <= limits.maxRememberedSpanDigests) break;
      this.#digestCount -= r.digests!.size;
      r.digests = undefined;
      this.#withDigests.delete(key);
    }
    while (this.#closed.size > limits.maxRememberedKeys) {
      const [key, r] = this.#closed.oldest()!;
      this.forget(key, r);
      this.#forgotten.add([key, ...r.traceIds], r.closedAtMs);
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

/**
 * How far ahead of this process's clock a sender's span times may run and still be caught by
 * the horizon (a re-sent span carries its original start time).
 */
export const CLOCK_SKEW_ALLOWANCE_MS = 60_000;
