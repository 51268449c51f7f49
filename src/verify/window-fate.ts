import { sha256Hex } from '../core/digest.ts';
import type { Checker } from './checker.ts';
import { revisionKey } from './manifest-vs-capture.ts';
import type { FindingsSource, StreamRecord } from './records.ts';
import { type RecordLocation, ViolationList, locationText } from './violation.ts';

/**
 * `window-fate`: every window a revision's policy could ask for has exactly one fate. In a
 * manifest each window is listed once; a `judged` window is allowed only with the judge
 * enabled; one not judged names why (its reason) and no findings. Two manifests of one
 * revision (a re-emission) give every window the same fate: kept per revision as a digest of
 * its windows' fates, not the windows.
 */
export class WindowFate implements Checker {
  readonly id = 'window-fate' as const;
  readonly violations = new ViolationList(this.id);
  checked = 0;
  readonly #fates = new Map<string, { digest: string; at: RecordLocation }>();

  record(r: StreamRecord, source: FindingsSource): void {
    if (r.kind !== 'manifest') return;
    const m = r.record;
    const key = m.subject.trajectory_key;
    const add = (what: string) => this.violations.add(r.at, what, key);
    const fates = new Map<string, string>();
    for (const w of m.windows) {
      this.checked++;
      const before = fates.get(w.window_id);
      if (before !== undefined) add(`window ${w.window_id} has two fates in one manifest: ${before} and ${w.fate}`);
      fates.set(w.window_id, w.fate);
      if (w.fate === 'judged' && m.judge === 'disabled') add(`window ${w.window_id} is judged while the manifest says the judge is disabled`);
      if (w.fate !== 'judged' && w.reason === undefined) add(`window ${w.window_id} is ${w.fate} without a reason`);
      if (w.fate !== 'judged' && w.finding_ids.length > 0) add(`window ${w.window_id} is ${w.fate} yet names ${w.finding_ids.length} judged finding(s)`);
    }
    const digest = sha256Hex(
      [...fates]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([id, fate]) => `${id}:${fate}`)
        .join('\n'),
    );
    const k = `${source.name}\u0000${revisionKey(key, m.subject.revision)}`;
    const earlier = this.#fates.get(k);
    if (earlier === undefined) this.#fates.set(k, { digest, at: r.at });
    else if (earlier.digest !== digest) add(`revision ${m.subject.revision}'s windows have other fates than in its manifest at ${locationText(earlier.at)}`);
  }
}
