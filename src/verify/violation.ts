/**
 * What `trajwatch verify` reports: each invariant by a stable id, and each violation with the
 * record it is in (a file and line, a segment and byte offset, or a topic partition and offset).
 */

/** The invariants, by the ids `verify` prints and `--json` carries; the order is the report's. */
export const INVARIANT_IDS = [
  'record-schema',
  'manifest-vs-capture',
  'window-fate',
  'audience-strip',
  'revision-unique',
  'finding-id-stable',
  'manifest-findings',
  'spans-accounted',
] as const;

export type InvariantId = (typeof INVARIANT_IDS)[number];

/** Where a record sits: a line of a local log, a frame of a segment, or a message of a topic. */
export type RecordLocation = { file: string; line: number } | { file: string; offset: number } | { topic: string; partition: number; offset: string };

/** One record that breaks one invariant. */
export interface Violation {
  invariant: InvariantId;
  location: RecordLocation;
  /** The trajectory key the record is about, when it names one. */
  key?: string;
  /** What is wrong, in one sentence. */
  what: string;
}

/** The location as one short text: `path:line`, `path@byte`, `topic[partition]@offset`. */
export function locationText(at: RecordLocation): string {
  if ('topic' in at) return `${at.topic}[${at.partition}]@${at.offset}`;
  return 'line' in at ? `${at.file}:${at.line}` : `${at.file}@${at.offset}`;
}

/** Violations kept per invariant; beyond it they are counted only (memory stays bounded on a broken directory). */
export const MAX_VIOLATIONS_KEPT = 1_000;

/** The violations of one invariant: the first {@link MAX_VIOLATIONS_KEPT} kept, every one counted. */
export class ViolationList {
  readonly invariant: InvariantId;
  readonly kept: Violation[] = [];
  count = 0;

  constructor(invariant: InvariantId) {
    this.invariant = invariant;
  }

  add(location: RecordLocation, what: string, key?: string): void {
    this.count++;
    if (this.kept.length < MAX_VIOLATIONS_KEPT) this.kept.push({ invariant: this.invariant, location, ...(key === undefined ? {} : { key }), what });
  }
}
