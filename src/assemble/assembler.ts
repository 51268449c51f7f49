import { withTexts } from '../normalize/step-texts.ts';
import { sortSmall } from '../core/sort-small.ts';
import { REFUSAL } from '../ingest/refusal.ts';
import { type AdmissionRefusal, foldFloor, type PositionFloor, type SourcePosition } from '../ingest/pipeline-input.ts';
import type { Step } from '../normalize/step.ts';
import { DeadlineHeap } from './deadline-heap.ts';
import { type CloseCause, closeRevision } from './close-revision.ts';
import { ClosedRevisions, type Retained, retainedOf } from './closed-revisions.ts';
import { HeldContent, type HeldEvent, type JoinCounts, withContent } from './log-join.ts';
import type { AssemblerLimits } from './limits.ts';
import { openNextRevision, startMs } from './next-revision.ts';
import { emptyBuffer, foldCapture, holdPosition, type OpenBuffer } from './open-buffer.ts';
import type { Inherited } from './revision-inheritance.ts';
import type { RememberedRevision, RevisionMemory } from './revision-memory.ts';
import { type OpenTrajectories, sessionBufferFor } from './session-keys.ts';
import { spanFingerprint, stepDigest } from './span-digests.ts';
import { compareSteps } from './step-order.ts';
import type { CaptureConflict, IncompleteReason, Trajectory } from './trajectory.ts';

/**
 * How trajectories are keyed: `session` (conversation/session id when a span names one, else
 * the trace id) or `trace` (always the trace id; a trace naming a session is marked
 * `partitioned-session`, because other traces of that session may be on other partitions).
 */
export type KeyBy = 'session' | 'trace';

export interface AssemblerStats {
  openTrajectories: number;
  bufferedBytes: number;
  retainedBytes: number;
  duplicateSpans: number;
  conflictingSpans: number;
  lateSpans: number;
  contentEvents: ContentEventStats;
}

/** Content events (log records) given to the assembler, by what became of them, since start. */
export interface ContentEventStats extends JoinCounts {
  /** Held with an open trajectory for the step of their span. */
  held: number;
  /** An exact resend of a record already held: held once. */
  duplicate: number;
  /** Arrived after their trajectory closed and opened its next revision. */
  late: number;
}

/**
 * Buffers steps per trajectory key and closes trajectories by the rules of DESIGN.md:
 * after the root ended and a quiet period passed, after an idle timeout, at the span bound,
 * or when the input ends. Time is whatever the caller says it is: arrival time in `serve`,
 * the spans' own time in `replay`, so replays are deterministic.
 *
 * The assembler never drops a span: a duplicate export is deduplicated, a conflicting one is
 * recorded as a capture conflict, and a span arriving after close opens a new revision.
 */
export class Assembler {
  readonly #limits: AssemblerLimits;
  readonly #onClose: (t: Trajectory, positions: PositionFloor | undefined, captured: () => Step[]) => void;
  readonly #sessionKeys: boolean;
  readonly #memory: RevisionMemory | undefined;
  readonly #open = new Map<string, OpenBuffer>();
  /** Which trajectory key a trace belongs to (a session can span many traces). */
  readonly #traceKey = new Map<string, string>();
  /** Closed trajectories, oldest first: steps kept for late spans, then digests, then only the revision. */
  readonly #closed: ClosedRevisions;
  readonly #heap = new DeadlineHeap();
  /** The open trajectories as session keying sees them (`session-keys.ts`). */
  readonly #trajectories: OpenTrajectories = {
    open: this.#open,
    traceKey: this.#traceKey,
    bufferOf: (key, activityMs) => this.#open.get(key) ?? this.#openBuffer(key, activityMs),
    schedule: (buffer) => this.#schedule(buffer),
  };
  #bufferedBytes = 0;
  #duplicateSpans = 0;
  #conflictingSpans = 0;
  #lateSpans = 0;
  readonly #content: ContentEventStats = { held: 0, duplicate: 0, late: 0, joined: 0, noNewFacts: 0, spanMissing: 0 };

  /**
   * `onClose` receives each closed trajectory and, when its spans came with source positions,
   * the lowest offset per partition that fed it (held until its findings are durable); and
   * `captured`, its steps as captured (content joined, nothing derived by `linkRequests`), in
   * trajectory order, which is what a repartition forwards. `memory` is told of each closed
   * revision, before `onClose`, so it can outlive the process ({@link restore}).
   */
  constructor(
    limits: AssemblerLimits,
    onClose: (t: Trajectory, positions: PositionFloor | undefined, captured: () => Step[]) => void,
    options: { keyBy?: KeyBy; memory?: RevisionMemory | undefined } = {},
  ) {
    this.#limits = limits;
    this.#onClose = onClose;
    this.#sessionKeys = (options.keyBy ?? 'session') === 'session';
    this.#memory = options.memory;
    this.#closed = new ClosedRevisions(limits, (key, r) => this.#untrack(key, r));
  }

  /**
   * Takes the revisions a previous process closed (oldest first), before any span; `horizonMs`:
   * the memory was cut or lost up to there (`ClosedRevisions.mayHaveSeen`).
   */
  restore(revisions: Iterable<RememberedRevision>, horizonMs?: number): void {
    if (horizonMs !== undefined) this.#closed.raiseHorizon(horizonMs);
    for (const r of revisions) {
      this.#closed.restore(r);
      if (this.#sessionKeys) for (const t of r.traceIds) this.#traceKey.set(t, r.key);
    }
  }

  /** Whether a new request may be accepted; checked before decoding it. */
  admission(): AdmissionRefusal | undefined {
    if (this.#open.size >= this.#limits.maxOpenTrajectories) return REFUSAL.maxOpenTrajectories;
    if (this.#bufferedBytes >= this.#limits.maxBufferedBytes) return REFUSAL.maxBufferedBytes;
    return undefined;
  }

  /** See {@link ClosedRevisions.referencedFrom}. */
  referencedFrom(partition: number): number | undefined {
    return this.#closed.referencedFrom(partition);
  }

  stats(): AssemblerStats {
    return {
      openTrajectories: this.#open.size,
      bufferedBytes: this.#bufferedBytes,
      retainedBytes: this.#closed.retainedBytes,
      duplicateSpans: this.#duplicateSpans,
      conflictingSpans: this.#conflictingSpans,
      lateSpans: this.#lateSpans,
      contentEvents: { ...this.#content },
    };
  }

  /** The earliest time at which some open trajectory may close. */
  nextDeadlineMs(): number | undefined {
    return this.#heap.peekDeadline();
  }

  /**
   * Adds one step; `activityMs` is the arrival time (serve) or the step's end time (replay);
   * `position` is where the step's record sits in a replayable source, if it has one.
   */
  add(step: Step, activityMs: number, position?: SourcePosition): void {
    // A duplicate of a span already closed adds nothing: counted, and its position is not held.
    if (this.#closedDuplicate(step)) return;
    const buffer = this.#bufferFor(step, activityMs);
    // A first revision of a key that may have had one before claims no absence (`previous-revision-unknown`).
    if (buffer.revision === 1 && !buffer.reasons.has('previous-revision-unknown') && this.#closed.mayHaveSeen(buffer.key, step.traceId, startMs(step))) {
      buffer.reasons.add('previous-revision-unknown');
    }
    const id = `${step.traceId}/${step.id}`;
    const existing = buffer.steps.get(id);
    const remembered = existing === undefined ? buffer.previous?.fingerprintOf(step.traceId, step.id) : undefined;
    if (existing !== undefined || remembered !== undefined) {
      const keptDigest = existing === undefined ? remembered! : stepDigest(existing);
      const same = existing === undefined ? spanFingerprint(step) === remembered : stepDigest(step) === keptDigest;
      if (same) {
        this.#duplicateSpans++;
      } else {
        this.#conflictingSpans++;
        buffer.conflicts.push({ traceId: step.traceId, spanId: step.id, keptDigest, refusedDigest: stepDigest(step) });
        // The conflict is part of what this buffer will emit: its record is not finished before.
        if (position !== undefined) holdPosition(buffer, position);
      }
      // Every open buffer has a live deadline, also one opened by this span.
      this.#schedule(buffer);
      return;
    }
    if (position !== undefined) holdPosition(buffer, position);
    buffer.steps.set(id, step);
    buffer.traceIds.add(step.traceId);
    buffer.bytes += step.encodedBytes;
    this.#bufferedBytes += step.encodedBytes;
    if (step.parentId === undefined) buffer.rootSeen = true;
    if (activityMs > buffer.lastActivityMs) buffer.lastActivityMs = activityMs;
    this.#schedule(buffer);
    if (buffer.steps.size >= this.#limits.maxSpansPerTrajectory) {
      buffer.reasons.add('span-limit');
      this.#close(buffer, 'span-limit', activityMs);
    }
  }

  /**
   * Holds a content event (a log record) naming span `spanId` of trace `traceId` with that
   * trace's open trajectory, charged to the byte bound like a span, until the trajectory closes
   * and it joins the span's step (`log-join.ts`). Arriving before any span of its trace, it opens
   * the trajectory. Arriving after the trajectory closed: counted as no news when the retained
   * step already holds every fact it carries, else it opens the next revision as a late span
   * does (and when the steps were let go, that revision says so).
   */
  addContentEvent(traceId: string, spanId: string, event: HeldEvent, bytes: number, activityMs: number, position?: SourcePosition): void {
    const key = this.#traceKey.get(traceId) ?? traceId;
    let buffer = this.#open.get(key);
    if (buffer === undefined) {
      const closed = this.#closed.get(key);
      if (closed !== undefined) {
        const step = closed.steps?.get(`${traceId}/${spanId}`);
        if (step !== undefined && withContent(step, [event]) === undefined) {
          this.#content.noNewFacts++;
          return;
        }
        this.#content.late++;
      }
      buffer = this.#openBuffer(key, activityMs, 'content');
      // A trace keyed by its own id so far: its first span naming a session merges it there.
      if (this.#sessionKeys && key === traceId) this.#traceKey.set(traceId, key);
    }
    if (position !== undefined) holdPosition(buffer, position);
    if (!(buffer.held ??= new HeldContent()).hold(`${traceId}/${spanId}`, event)) {
      this.#content.duplicate++;
      return;
    }
    this.#content.held++;
    buffer.traceIds.add(traceId);
    buffer.bytes += bytes;
    this.#bufferedBytes += bytes;
    if (activityMs > buffer.lastActivityMs) buffer.lastActivityMs = activityMs;
    this.#schedule(buffer);
  }

  /** Marks the trajectory of `traceId` incomplete because the receiver refused spans of it. */
  noteRefused(traceId: string, count: number, activityMs: number, position?: SourcePosition): void {
    const key = this.#traceKey.get(traceId) ?? traceId;
    const buffer = this.#open.get(key) ?? this.#openBuffer(key, activityMs);
    if (position !== undefined) holdPosition(buffer, position);
    buffer.refusedSpans += count;
    buffer.reasons.add('refused-spans');
    this.#schedule(buffer);
  }

  /**
   * Folds what stage 1 knew of a forwarded trace's capture (`repartition/record.ts`) into the
   * trajectory its steps joined (or, for a trace with no step, the one of `sessionId`): its
   * incomplete reasons, conflicts and refused spans, so the session is incomplete whenever one
   * of its traces was. Called after the trace's steps were added.
   */
  noteForwarded(
    traceId: string,
    sessionId: string,
    capture: { incompleteReasons: readonly IncompleteReason[]; conflicts: readonly CaptureConflict[]; refusedSpans: number },
    activityMs: number,
    position?: SourcePosition,
  ): void {
    const key = this.#traceKey.get(traceId) ?? (this.#sessionKeys ? sessionId : traceId);
    const buffer = this.#open.get(key) ?? this.#openBuffer(key, activityMs);
    if (this.#sessionKeys) this.#traceKey.set(traceId, key);
    if (position !== undefined) holdPosition(buffer, position);
    buffer.traceIds.add(traceId);
    foldCapture(buffer, capture);
    if (activityMs > buffer.lastActivityMs) buffer.lastActivityMs = activityMs;
    this.#schedule(buffer);
  }

  /**
   * Closes every trajectory whose deadline is at or before `nowMs`, at most `maxCloses` of
   * them; true when more are due (the caller continues in a later turn).
   */
  advance(nowMs: number, maxCloses: number = Infinity): boolean {
    let closes = 0;
    for (;;) {
      const next = this.#heap.peekDeadline();
      if (next === undefined || next > nowMs) break;
      if (closes >= maxCloses) return true;
      const entry = this.#heap.pop()!;
      const buffer = this.#open.get(entry.key);
      if (buffer === undefined || buffer.scheduledAtMs !== entry.deadlineMs) continue;
      buffer.scheduledAtMs = undefined;
      const deadline = this.#deadline(buffer);
      if (deadline > nowMs) {
        this.#schedule(buffer);
        continue;
      }
      this.#close(buffer, buffer.rootSeen ? 'quiet-after-root' : 'idle-timeout', nowMs);
      closes++;
    }
    this.#closed.expire(nowMs);
    return false;
  }

  /** Closes what is still open (end of a replay, shutdown); with `leaveHeld`, not those a source replays (they hold a position). */
  flush(cause: 'end-of-input' | 'shutdown', nowMs: number, leaveHeld = false): void {
    for (const buffer of [...this.#open.values()]) if (!leaveHeld || buffer.positions === undefined) this.#close(buffer, cause, nowMs);
  }

  /** Folds, per partition, the lowest offset still held by an open trajectory into `floor`. */
  heldPositions(floor: PositionFloor): void {
    for (const buffer of this.#open.values()) if (buffer.positions !== undefined) foldFloor(floor, buffer.positions);
  }

  /**
   * Forgets, without emitting, every open trajectory fed from `partitions`, and the closed
   * ones too (so a replay of those partitions rebuilds them as they were, not as late spans).
   * The source replays those partitions from their committed offsets. A trajectory fed also
   * from a partition not in the set stays open (counted in `mixed`): dropping it would lose
   * the kept partition's spans, whose offsets may be committed past.
   */
  dropPartitions(partitions: ReadonlySet<number>): { dropped: number; mixed: number } {
    let dropped = 0;
    let mixed = 0;
    for (const buffer of [...this.#open.values()]) {
      if (buffer.positions === undefined) continue;
      let revoked = 0;
      for (const p of buffer.positions.keys()) if (partitions.has(p)) revoked++;
      if (revoked === 0) continue;
      if (revoked < buffer.positions.size) {
        mixed++;
        continue;
      }
      dropped++;
      this.#open.delete(buffer.key);
      this.#bufferedBytes -= buffer.bytes;
      for (const t of buffer.traceIds) if (this.#traceKey.get(t) === buffer.key) this.#traceKey.delete(t);
    }
    for (const [key, r] of this.#closed.entries()) {
      if (r.partitions === undefined || !r.partitions.some((p) => partitions.has(p))) continue;
      this.#closed.forget(key, r);
      this.#untrack(key, r);
    }
    return { dropped, mixed };
  }

  /**
   * Keeps one live heap entry per buffer. A deadline that moved later is found when its old
   * entry comes due (and is pushed again then); one that moved earlier gets a new entry now.
   */
  #schedule(buffer: OpenBuffer): void {
    const deadline = this.#deadline(buffer);
    if (buffer.scheduledAtMs !== undefined && buffer.scheduledAtMs <= deadline) return;
    buffer.scheduledAtMs = deadline;
    this.#heap.push(deadline, buffer.key);
  }

  #deadline(buffer: OpenBuffer): number {
    return buffer.lastActivityMs + (buffer.rootSeen ? this.#limits.quietPeriodMs : this.#limits.idleTimeoutMs);
  }

  #bufferFor(step: Step, activityMs: number): OpenBuffer {
    if (!this.#sessionKeys) {
      const buffer = this.#open.get(step.traceId) ?? this.#openBuffer(step.traceId, activityMs);
      if (step.sessionId !== undefined) buffer.reasons.add('partitioned-session');
      return buffer;
    }
    return sessionBufferFor(this.#trajectories, step, activityMs);
  }

  /**
   * Whether `step` is an exact duplicate of a span of a closed trajectory (retained step, or
   * remembered digest): then it is counted and nothing opens. A different payload under a
   * closed span id is not: it opens the next revision, which records the conflict.
   */
  #closedDuplicate(step: Step): boolean {
    const key = this.#sessionKeys ? this.#traceKey.get(step.traceId) : step.traceId;
    if (key === undefined || this.#open.has(key)) return false;
    if (!this.#closed.holdsDuplicate(key, step)) return false;
    this.#duplicateSpans++;
    return true;
  }

  /** `cause` says what arrived: a late content event is counted apart from late spans. */
  #openBuffer(key: string, activityMs: number, cause: 'span' | 'content' = 'span'): OpenBuffer {
    const before = this.#closed.get(key);
    const buffer = emptyBuffer(key, activityMs);
    if (before !== undefined) {
      if (cause === 'span') this.#lateSpans++;
      this.#closed.forget(key, before);
      openNextRevision(buffer, before);
      this.#bufferedBytes += buffer.bytes;
      for (const t of before.traceIds) this.#traceKey.set(t, key);
    } else if (cause === 'content' && this.#closed.mayHaveSeen(key, key, undefined)) {
      buffer.reasons.add('previous-revision-unknown');
    }
    this.#open.set(key, buffer);
    return buffer;
  }

  /** Forgets which key the traces of a forgotten closed revision belong to, unless it is open again. */
  #untrack(key: string, r: Retained): void {
    for (const t of r.traceIds) if (this.#traceKey.get(t) === key && !this.#open.has(key)) this.#traceKey.delete(t);
  }

  #close(buffer: OpenBuffer, cause: CloseCause, nowMs: number): void {
    this.#open.delete(buffer.key);
    this.#bufferedBytes -= buffer.bytes;
    const { trajectory, inherited, joined } = closeRevision(buffer, cause);
    if (joined !== undefined) {
      this.#content.joined += joined.joined;
      this.#content.noNewFacts += joined.noNewFacts;
      this.#content.spanMissing += joined.spanMissing;
    }
    this.#retain(buffer, inherited, trajectory.traceIds, cause, nowMs);
    this.#onClose(trajectory, buffer.positions, () => withTexts(sortSmall([...buffer.steps.values()], compareSteps)));
  }

  #retain(buffer: OpenBuffer, inherited: Inherited, traceIds: string[], cause: CloseCause, nowMs: number): void {
    const { retained, keepSteps } = retainedOf(buffer, { inherited, traceIds, cause, nowMs }, this.#limits, this.#memory !== undefined);
    const { revision, partitions, digests, digestsWithSteps } = retained;
    this.#closed.retain(buffer.key, retained, keepSteps, nowMs);
    this.#memory?.closed({ key: buffer.key, revision, inherited, traceIds, partitions, digests: digestsWithSteps ?? digests, closedAtMs: nowMs });
  }
}
