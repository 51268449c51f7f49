import type { Step } from '../normalize/step.ts';
import type { Retained } from './closed-revisions.ts';
import type { OpenBuffer } from './open-buffer.ts';

/**
 * Opens `buffer` as the revision after `before`: what the earlier revisions lost stays lost
 * (reasons, conflicts and refusals carry over); their steps join it while they are kept, else
 * it says `previous-revision-not-retained` and knows the earlier spans by their digests only.
 */
export function openNextRevision(buffer: OpenBuffer, before: Retained): void {
  buffer.revision = before.revision + 1;
  for (const r of before.inherited.reasons) buffer.reasons.add(r);
  buffer.conflicts.push(...before.inherited.conflicts);
  buffer.sessionConflicts.push(...before.inherited.sessionConflicts);
  buffer.refusedSpans += before.inherited.refusedSpans;
  buffer.previous = before.digests;
  if (before.steps === undefined) {
    buffer.reasons.add('previous-revision-not-retained');
    for (const r of before.inherited.reasonsWithoutSteps) buffer.reasons.add(r);
  } else {
    for (const [id, s] of before.steps) {
      buffer.steps.set(id, s);
      if (s.parentId === undefined) buffer.rootSeen = true;
    }
    buffer.held = before.held;
    buffer.bytes = before.bytes;
  }
  for (const t of before.traceIds) buffer.traceIds.add(t);
}

/** The step's start in whole milliseconds, on the spans' clock. */
export function startMs(step: Step): number {
  return Number(step.startTimeUnixNano / 1_000_000n);
}
