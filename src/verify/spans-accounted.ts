import type { Checker } from './checker.ts';
import type { TrajectoryLine, WalRequest } from './records.ts';
import { type RecordLocation, ViolationList } from './violation.ts';

/**
 * `spans-accounted`: every span the write-ahead log accepted is in some trajectory. The log's
 * release floor tells what is finished: a request below it had every trajectory its spans
 * reached closed and written (the floor moves only after the output is durable), so its spans
 * must be in the trajectory log, or counted as refused on a trajectory of their trace (over a
 * bound). A request at or above the floor is still open, or waits in the log for the next start
 * (a serve stopped by SIGTERM leaves its open trajectories there): counted, never a violation.
 * So a running serve, a cleanly stopped one and a crashed one are all told apart by the same
 * floor, and a directory without a log (replay, `receiver.wal.enabled: false`) has nothing to
 * account. The log is read first, the trajectories after: a request released during the read
 * has its trajectories already written. Memory: the spans of the released requests still in
 * the log (bounded by `receiver.wal.maxBytes`), minus those found.
 */
export class SpansAccounted implements Checker {
  readonly id = 'spans-accounted' as const;
  readonly violations = new ViolationList(this.id);
  checked = 0;
  #requests = 0;
  #pending = 0;
  /** Released spans not yet found, by trace id then span id: where the request holding each sits. */
  readonly #missing = new Map<string, Map<string, { at: RecordLocation; seq: number }>>();
  /** Spans refused by a trajectory of each trace with a released span (over a bound: counted, not kept). */
  readonly #refused = new Map<string, number>();

  walRequest(r: WalRequest): void {
    this.#requests++;
    if (!r.released) {
      this.#pending += r.spans.length;
      return;
    }
    for (const s of r.spans) {
      this.checked++;
      let spans = this.#missing.get(s.traceId);
      if (spans === undefined) this.#missing.set(s.traceId, (spans = new Map()));
      spans.set(s.spanId, { at: r.at, seq: r.seq });
    }
  }

  trajectory(line: TrajectoryLine): void {
    if (this.#missing.size === 0) return;
    for (const step of line.steps) {
      const spans = this.#missing.get(step.traceId);
      if (spans === undefined) continue;
      spans.delete(step.id);
      if (spans.size === 0) this.#missing.delete(step.traceId);
    }
    if ((line.refusedSpans ?? 0) > 0) {
      for (const traceId of line.traceIds) {
        if (this.#missing.has(traceId)) this.#refused.set(traceId, (this.#refused.get(traceId) ?? 0) + line.refusedSpans!);
      }
    }
  }

  finish(): void {
    for (const [traceId, spans] of this.#missing) {
      // Refused over a bound: counted on the trajectory, so accounted for (which ones is not said).
      if (spans.size <= (this.#refused.get(traceId) ?? 0)) continue;
      for (const [spanId, { at, seq }] of spans) {
        this.violations.add(at, `span ${traceId}/${spanId} of released request ${seq} is in no trajectory`);
      }
    }
  }

  note(): string | undefined {
    if (this.#requests === 0) return 'no write-ahead log requests (replay, the log off, or all released and deleted)';
    return this.#pending === 0 ? undefined : `${this.#pending} span(s) in unreleased requests: still open, or replayed at the next start`;
  }
}
