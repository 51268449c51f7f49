import { sha256Hex } from '../core/digest.ts';
import type { Checker } from './checker.ts';
import type { FindingsSource, RememberedLine, StreamRecord, TrajectoryLine } from './records.ts';
import { type RecordLocation, ViolationList, locationText } from './violation.ts';

/** The newest revision read of one key in one log, and where. */
interface Latest {
  revision: number;
  digest: string;
  at: RecordLocation;
}

/**
 * `revision-unique`: no (key, revision) is written twice, and each key's revisions increase in
 * the order written, in each log that numbers them: the trajectory log, each findings stream's
 * manifests, and the closed-revision memory (whose line numbers `n` increase too). Kept per
 * key: its newest revision and a digest of that line, so a repeat says whether it was the same
 * record again or another one under the same number.
 */
export class RevisionUnique implements Checker {
  readonly id = 'revision-unique' as const;
  readonly violations = new ViolationList(this.id);
  checked = 0;
  readonly #latest = new Map<string, Latest>();
  #lastN = -1;

  trajectory(line: TrajectoryLine, at: RecordLocation): void {
    this.#see('trajectories', line.key, line.revision, sha256Hex(JSON.stringify(line)), at, 'trajectory');
  }

  record(r: StreamRecord, source: FindingsSource): void {
    if (r.kind !== 'manifest') return;
    const m = r.record;
    this.#see(source.name, m.subject.trajectory_key, m.subject.revision, m.manifest_id, r.at, 'manifest');
  }

  remembered(line: RememberedLine, at: RecordLocation): void {
    if (line.n <= this.#lastN) this.violations.add(at, `revision memory line number ${line.n} after ${this.#lastN}`, line.key);
    this.#lastN = Math.max(this.#lastN, line.n);
    this.#see('revisions', line.key, line.revision, String(line.n), at, 'remembered revision');
  }

  #see(log: string, key: string, revision: number, digest: string, at: RecordLocation, what: string): void {
    this.checked++;
    const k = `${log}\u0000${key}`;
    const latest = this.#latest.get(k);
    if (latest !== undefined && revision <= latest.revision) {
      const repeat = revision === latest.revision;
      const same = repeat && latest.digest === digest ? ' (the same record again)' : '';
      this.violations.add(
        at,
        repeat
          ? `${what} revision ${revision} written twice${same}: first at ${locationText(latest.at)}`
          : `${what} revision ${revision} after revision ${latest.revision} (at ${locationText(latest.at)}): revisions of a key must increase`,
        key,
      );
      return;
    }
    this.#latest.set(k, { revision, digest, at });
  }
}
