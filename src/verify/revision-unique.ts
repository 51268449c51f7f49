import { sha256Hex } from '../core/digest.ts';
import type { Checker } from './checker.ts';
import type { FindingsSource, RememberedLine, StreamRecord, TrajectoryLine } from './records.ts';
import { type RecordLocation, ViolationList, locationText } from './violation.ts';

/** Digests kept per revision are cut to this many hex digits. */
const DIGEST_HEX = 16;

/** One key's revisions in one log: the newest, and each one's content digest and first place. */
interface KeyRevisions {
  newest: number;
  seen: Map<number, { digest: string; at: RecordLocation }>;
}

/**
 * `revision-unique`: no (key, revision) is written twice with different content, and each
 * key's revisions increase in the order written, in each log that numbers them: the trajectory
 * log, each findings stream's manifests, and the closed-revision memory (whose line numbers `n`
 * increase too). Delivery is at least once (docs/reliability.md: a crash before a revision's
 * memory line is durable rebuilds it from the write-ahead log), so the same revision written
 * again with the same content — the same spans, or the same findings named — is a redelivery:
 * counted, not a violation. Kept per key and revision: a short digest and where it was first.
 */
export class RevisionUnique implements Checker {
  readonly id = 'revision-unique' as const;
  readonly violations = new ViolationList(this.id);
  checked = 0;
  readonly #keys = new Map<string, KeyRevisions>();
  #lastN = -1;
  #redelivered = 0;

  trajectory(line: TrajectoryLine, at: RecordLocation): void {
    const spans = line.steps.map((s) => `${s.traceId}/${s.id}`).sort();
    this.#see('trajectories', line.key, line.revision, digest(spans), at, 'trajectory');
  }

  record(r: StreamRecord, source: FindingsSource): void {
    if (r.kind !== 'manifest') return;
    const m = r.record;
    const named = [String(m.capture.steps), ...m.checks.flatMap((c) => c.finding_ids), ...m.windows.flatMap((w) => w.finding_ids)].sort();
    this.#see(source.name, m.subject.trajectory_key, m.subject.revision, digest(named), r.at, 'manifest');
  }

  remembered(line: RememberedLine, at: RecordLocation): void {
    if (line.n <= this.#lastN) this.violations.add(at, `revision memory line number ${line.n} after ${this.#lastN}`, line.key);
    this.#lastN = Math.max(this.#lastN, line.n);
    this.#see('revisions', line.key, line.revision, '', at, 'remembered revision');
  }

  #see(log: string, key: string, revision: number, content: string, at: RecordLocation, what: string): void {
    this.checked++;
    const k = `${log}\u0000${key}`;
    let revisions = this.#keys.get(k);
    if (revisions === undefined) this.#keys.set(k, (revisions = { newest: 0, seen: new Map() }));
    const first = revisions.seen.get(revision);
    if (first !== undefined) {
      if (first.digest === content) this.#redelivered++;
      else this.violations.add(at, `${what} revision ${revision} written twice with other content: first at ${locationText(first.at)}`, key);
      return;
    }
    if (revision < revisions.newest) {
      this.violations.add(at, `${what} revision ${revision} after revision ${revisions.newest}: revisions of a key must increase`, key);
    }
    revisions.seen.set(revision, { digest: content, at });
    revisions.newest = Math.max(revisions.newest, revision);
  }

  note(): string | undefined {
    return this.#redelivered === 0 ? undefined : `${this.#redelivered} record(s) written again with the same content (at-least-once redelivery)`;
  }
}

function digest(parts: readonly string[]): string {
  return sha256Hex(parts.join('\n')).slice(0, DIGEST_HEX);
}
