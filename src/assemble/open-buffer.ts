import { foldFloor, type PositionFloor, type SourcePosition } from '../ingest/pipeline-input.ts';
import type { Step } from '../normalize/step.ts';
import { HeldContent } from './log-join.ts';
import type { SpanDigests } from './span-digests.ts';
import type { CaptureConflict, IncompleteReason, SessionConflict } from './trajectory.ts';

/** One open trajectory: what has arrived under its key since it opened (or reopened). */
export interface OpenBuffer {
  key: string;
  revision: number;
  /** `${traceId}/${spanId}` → step; insertion order is arrival order. */
  steps: Map<string, Step>;
  traceIds: Set<string>;
  conflicts: CaptureConflict[];
  sessionConflicts: SessionConflict[];
  reasons: Set<IncompleteReason>;
  refusedSpans: number;
  bytes: number;
  rootSeen: boolean;
  lastActivityMs: number;
  /** The deadline of the buffer's live heap entry; other entries for its key are stale. */
  scheduledAtMs: number | undefined;
  /** Lowest source offset per partition among the records that fed it; undefined without positions. */
  positions: PositionFloor | undefined;
  /** Content events (log records) waiting to join their steps at close. */
  held: HeldContent | undefined;
  /** Digests of earlier revisions' spans whose steps are not in `steps` (let go). */
  previous: SpanDigests | undefined;
}

/** An empty first revision under `key`. */
export function emptyBuffer(key: string, activityMs: number): OpenBuffer {
  return {
    key,
    revision: 1,
    steps: new Map(),
    traceIds: new Set(),
    conflicts: [],
    sessionConflicts: [],
    reasons: new Set(),
    refusedSpans: 0,
    bytes: 0,
    rootSeen: false,
    lastActivityMs: activityMs,
    scheduledAtMs: undefined,
    positions: undefined,
    held: undefined,
    previous: undefined,
  };
}

/** Holds `position` in the buffer's floor: offsets mostly arrive in order, so this is one lookup. */
export function holdPosition(buffer: OpenBuffer, position: SourcePosition): void {
  const floor = (buffer.positions ??= new Map());
  const held = floor.get(position.partition);
  if (held === undefined || position.offset < held) floor.set(position.partition, position.offset);
}

/**
 * Moves one trace's buffered spans, and what is recorded about them, from `source` to
 * `target`; the caller re-keys the trace and drops `source` when it is left empty.
 */
export function moveTrace(source: OpenBuffer, target: OpenBuffer, traceId: string): void {
  for (const [id, s] of source.steps) {
    if (s.traceId !== traceId) continue;
    source.steps.delete(id);
    target.steps.set(id, s);
    source.bytes -= s.encodedBytes;
    target.bytes += s.encodedBytes;
    if (s.parentId === undefined) target.rootSeen = true;
  }
  source.rootSeen = [...source.steps.values()].some((s) => s.parentId === undefined);
  source.conflicts = moveRecords(source.conflicts, target.conflicts, traceId);
  source.sessionConflicts = moveRecords(source.sessionConflicts, target.sessionConflicts, traceId);
  if (source.sessionConflicts.length === 0) source.reasons.delete('session-conflict');
  source.traceIds.delete(traceId);
  target.traceIds.add(traceId);
  // Refusals are counted per trajectory, not per trace: the moved trace may have lost spans.
  if (source.reasons.has('refused-spans')) target.reasons.add('refused-spans');
  if (source.positions !== undefined) foldFloor((target.positions ??= new Map()), source.positions);
  target.lastActivityMs = Math.max(target.lastActivityMs, source.lastActivityMs);
}

/** Whether `moveTrace` left nothing in `buffer` worth keeping open. */
export function isEmptied(buffer: OpenBuffer): boolean {
  return buffer.steps.size === 0 && buffer.traceIds.size === 0 && buffer.refusedSpans === 0;
}

/** Everything of `source` joins `target` (a trace keyed by its own id joining its session). */
export function absorb(source: OpenBuffer, target: OpenBuffer): void {
  for (const [id, step] of source.steps) target.steps.set(id, step);
  for (const t of source.traceIds) target.traceIds.add(t);
  target.conflicts.push(...source.conflicts);
  target.sessionConflicts.push(...source.sessionConflicts);
  for (const r of source.reasons) target.reasons.add(r);
  target.refusedSpans += source.refusedSpans;
  target.bytes += source.bytes;
  target.rootSeen ||= source.rootSeen;
  target.lastActivityMs = Math.max(target.lastActivityMs, source.lastActivityMs);
  if (source.positions !== undefined) foldFloor((target.positions ??= new Map()), source.positions);
  if (source.held !== undefined) (target.held ??= new HeldContent()).absorb(source.held);
}

/**
 * Folds what stage 1 knew of a forwarded trace's capture (`repartition/record.ts`) into
 * `buffer`: its incomplete reasons, conflicts not known yet and refused spans.
 */
export function foldCapture(
  buffer: OpenBuffer,
  capture: { incompleteReasons: readonly IncompleteReason[]; conflicts: readonly CaptureConflict[]; refusedSpans: number },
): void {
  for (const r of capture.incompleteReasons) buffer.reasons.add(r);
  for (const c of capture.conflicts) {
    const known = buffer.conflicts.some((k) => k.traceId === c.traceId && k.spanId === c.spanId && k.refusedDigest === c.refusedDigest);
    if (!known) buffer.conflicts.push({ ...c });
  }
  if (capture.refusedSpans > 0) {
    buffer.refusedSpans += capture.refusedSpans;
    buffer.reasons.add('refused-spans');
  }
}

/** Whether some step names a parent that is not in the trajectory (keys are `trace/span`). */
export function hasOrphans(steps: ReadonlyMap<string, Step>): boolean {
  for (const s of steps.values()) {
    if (s.parentId !== undefined && !steps.has(`${s.traceId}/${s.parentId}`)) return true;
  }
  return false;
}

/** Appends the records of `traceId` to `to`; returns the others. */
function moveRecords<T extends { traceId: string }>(from: T[], to: T[], traceId: string): T[] {
  const kept: T[] = [];
  for (const record of from) (record.traceId === traceId ? to : kept).push(record);
  return kept;
}
