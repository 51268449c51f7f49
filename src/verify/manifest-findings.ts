import { MANIFEST_CHECKS, MANIFEST_MAX_FINDING_IDS } from '../findings/manifest-schema.ts';
import type { Checker } from './checker.ts';
import { revisionKey } from './manifest-vs-capture.ts';
import type { FindingsSource, StreamRecord } from './records.ts';
import { ViolationList } from './violation.ts';

const CHECKS: ReadonlySet<string> = new Set(MANIFEST_CHECKS);

/**
 * `manifest-findings`: a manifest and the findings of its revision agree. It is written after
 * the findings it names, so every id it names (a check's, a judged window's) was read before it
 * in the same stream, for the same key and revision; a check that fired or observed counts at
 * least the ids it lists, one that did not counts none; and every inline finding of the
 * revision is its check's (`fired`/`observed`) and listed there (unless the list is at its
 * bound). Findings wait per revision until their manifest: memory holds the revisions whose
 * manifest is not yet read, never the whole log.
 */
export class ManifestFindings implements Checker {
  readonly id = 'manifest-findings' as const;
  readonly violations = new ViolationList(this.id);
  checked = 0;
  /** Per (stream, key, revision): the findings read, by id, with the check each is of (undefined: judged). */
  readonly #pending = new Map<string, Map<string, string | undefined>>();

  record(r: StreamRecord, source: FindingsSource): void {
    this.checked++;
    const k = `${source.name}\u0000${revisionKey(r.record.subject.trajectory_key, r.record.subject.revision)}`;
    if (r.kind === 'finding') {
      const f = r.record;
      const check = f.method.kind === 'judged' ? undefined : f.analyst_id === 'l0' ? f.area : f.analyst_id;
      let ids = this.#pending.get(k);
      if (ids === undefined) this.#pending.set(k, (ids = new Map()));
      ids.set(f.finding_id, check);
      return;
    }
    const m = r.record;
    const key = m.subject.trajectory_key;
    const add = (what: string) => this.violations.add(r.at, what, key);
    const read = this.#pending.get(k) ?? new Map<string, string | undefined>();
    this.#pending.delete(k);
    const unread = (id: string) => !read.has(id);
    for (const c of m.checks) {
      const made = c.status === 'fired' || c.status === 'observed';
      if (made && c.finding_count < Math.max(1, c.finding_ids.length))
        add(`${c.check} is ${c.status} with finding_count ${c.finding_count} and ${c.finding_ids.length} id(s)`);
      if (!made && (c.finding_count !== 0 || c.finding_ids.length !== 0)) add(`${c.check} is ${c.status} yet counts ${c.finding_count} finding(s)`);
      for (const id of c.finding_ids.filter(unread)) add(`${c.check} names finding ${id}, not written before the manifest for this revision`);
    }
    for (const w of m.windows)
      for (const id of w.finding_ids.filter(unread)) add(`window ${w.window_id} names finding ${id}, not written before the manifest for this revision`);
    for (const [id, check] of read) {
      if (check === undefined || !CHECKS.has(check)) continue;
      const status = m.checks.find((c) => c.check === check);
      if (status === undefined || (status.status !== 'fired' && status.status !== 'observed')) {
        add(`finding ${id} of ${check} was written for this revision, and the manifest says ${check} ${status?.status ?? 'is not accounted for'}`);
      } else if (status.finding_count <= MANIFEST_MAX_FINDING_IDS && !status.finding_ids.includes(id)) {
        add(`finding ${id} of ${check} was written for this revision and is not among the ids its manifest lists`);
      }
    }
  }

  note(): string | undefined {
    const open = this.#pending.size;
    return open === 0 ? undefined : `${open} revision(s) with findings and no manifest yet (still being written, or cut off)`;
  }
}
