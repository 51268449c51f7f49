import { canonicalJson } from '../core/canonical-json.ts';
import { applyContentEvents, type ContentEvent } from '../normalize/content-events.ts';
import type { Step } from '../normalize/step.ts';

/** A content event carried by a log record, held until its trajectory closes. */
export interface HeldEvent extends ContentEvent {
  timeUnixNano: bigint;
}

/** What happened to held content events when their trajectory closed, in log records. */
export interface JoinCounts {
  /** Filled at least one fact of the step of their span. */
  joined: number;
  /** Their step already held every fact they carry (attributes win), or its kind takes none. */
  noNewFacts: number;
  /**
   * Their span is not in the trajectory (the trajectory is marked `content-without-span`).
   * Counted at each close: a record kept for a late span is counted again when it joins.
   */
  spanMissing: number;
}

/** The facts a content event can fill: compared by reference to tell whether a join added any. */
const CONTENT_FACTS = ['toolName', 'toolCallId', 'args', 'result', 'input', 'toolSchemas'] as const;

/**
 * The content events (log records) held for the steps of one open trajectory, by
 * `${traceId}/${spanId}`. Log and span exporters batch independently, so a record usually
 * arrives before its span: it is held, not applied, and every held record joins its step when
 * the trajectory closes, in time order, through the same `applyContentEvents` that span events
 * go through. An exact resend of a record (an exporter retry) is held once.
 */
export class HeldContent {
  readonly #bySpan = new Map<string, Map<string, HeldEvent>>();

  /** Holds one event for `spanKey`; false when the same record is already held (a resend). */
  hold(spanKey: string, event: HeldEvent): boolean {
    let events = this.#bySpan.get(spanKey);
    if (events === undefined) this.#bySpan.set(spanKey, (events = new Map()));
    const identity = recordIdentity(event);
    if (events.has(identity)) return false;
    events.set(identity, event);
    return true;
  }

  isEmpty(): boolean {
    return this.#bySpan.size === 0;
  }

  /** Takes over what `other` holds (a trace's buffer merging into its session's). */
  absorb(other: HeldContent): void {
    for (const [spanKey, events] of other.#bySpan) {
      for (const event of events.values()) this.hold(spanKey, event);
    }
  }

  /**
   * Joins every held event into the step of its span in `steps` (keyed `${traceId}/${spanId}`)
   * and lets go of it; what is left is held for spans not in `steps` (kept with the closed
   * trajectory, so a late span's revision still gets it). A step that gains facts is replaced
   * by a filled copy, so a step object already emitted in an earlier revision never changes.
   */
  joinInto(steps: Map<string, Step>): JoinCounts {
    const counts: JoinCounts = { joined: 0, noNewFacts: 0, spanMissing: 0 };
    for (const [spanKey, held] of this.#bySpan) {
      const step = steps.get(spanKey);
      if (step === undefined) {
        counts.spanMissing += held.size;
        continue;
      }
      this.#bySpan.delete(spanKey);
      const filled = withContent(step, [...held.values()]);
      if (filled === undefined) counts.noNewFacts += held.size;
      else {
        steps.set(spanKey, filled);
        counts.joined += held.size;
      }
    }
    return counts;
  }
}

/**
 * A copy of `step` filled from `events` (in time order), or `undefined` when they add no fact.
 * Pure; used at close and to test whether a late record would change a closed trajectory.
 */
export function withContent(step: Step, events: readonly HeldEvent[]): Step | undefined {
  const copy: Step = { ...step };
  const ordered = [...events].sort((a, b) => (a.timeUnixNano < b.timeUnixNano ? -1 : a.timeUnixNano > b.timeUnixNano ? 1 : 0));
  applyContentEvents(copy, ordered);
  return CONTENT_FACTS.some((key) => copy[key] !== step[key]) ? copy : undefined;
}

function recordIdentity(event: HeldEvent): string {
  return `${event.timeUnixNano}\u0000${event.name}\u0000${canonicalJson(event.attributes)}\u0000${canonicalJson(event.body ?? null)}`;
}
