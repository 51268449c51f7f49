import { sha256Hex } from '../core/digest.ts';
import { findingId, normalizeClaim } from '../findings/identity.ts';
import type { Finding } from '../findings/schema.ts';
import type { Checker } from './checker.ts';
import type { FindingsSource, StreamRecord } from './records.ts';
import { type RecordLocation, ViolationList, locationText } from './violation.ts';

/** Digests kept per finding are cut to this many hex digits: enough to tell ids apart, a fraction of the memory. */
const DIGEST_HEX = 24;

/**
 * `finding-id-stable`: a finding's id is what its identity inputs make (`findingId` over
 * analyst, area, trajectory key, claim, id basis, treatment, conditions: the id recomputed from
 * the record is the record's), one id names one claim, and one claim about one trajectory has
 * one id across the trajectory's revisions and across the streams read (the local log and the
 * topic carry the same findings). The last holds for inline findings, whose provenance is the
 * one as of the claim's first observable moment; a judged one takes its revision's. An
 * external stream's records carry no `id_basis` (internal), so their id is not recomputed.
 */
export class FindingIdStable implements Checker {
  readonly id = 'finding-id-stable' as const;
  readonly violations = new ViolationList(this.id);
  checked = 0;
  /** finding_id → digest of the claim it names, and where it was first read. */
  readonly #claimOfId = new Map<string, { claim: string; at: RecordLocation }>();
  /** digest of (claim, id basis) → the finding_id it got first. */
  readonly #idOfClaim = new Map<string, { id: string; revision: number; at: RecordLocation }>();
  #notRecomputed = 0;

  record(r: StreamRecord, source: FindingsSource): void {
    if (r.kind !== 'finding') return;
    this.checked++;
    const f = r.record;
    const key = f.subject.trajectory_key;
    const add = (what: string) => this.violations.add(r.at, what, key);
    if (source.audience === 'internal') {
      const recomputed = recompute(f);
      if (recomputed !== f.finding_id) add(`finding_id ${f.finding_id} is not the id of its identity inputs (${recomputed})`);
    } else this.#notRecomputed++;
    const claim = digest([f.analyst_id, f.area, key, normalizeClaim(f.claim)]);
    const named = this.#claimOfId.get(f.finding_id);
    if (named === undefined) this.#claimOfId.set(f.finding_id, { claim, at: r.at });
    else if (named.claim !== claim) add(`finding_id ${f.finding_id} names another claim than at ${locationText(named.at)}`);
    // A judged finding takes the provenance of its revision's decision points, which a later step can change.
    if (f.id_basis === undefined || f.method.kind === 'judged') return;
    const fact = digest([claim, ...[...new Set(f.id_basis)].sort()]);
    const first = this.#idOfClaim.get(fact);
    if (first === undefined) this.#idOfClaim.set(fact, { id: f.finding_id, revision: f.subject.revision, at: r.at });
    else if (first.id !== f.finding_id) {
      add(
        `the same claim on the same subject has id ${f.finding_id} in revision ${f.subject.revision} and ${first.id} in revision ${first.revision} (${locationText(first.at)})`,
      );
    }
  }

  note(): string | undefined {
    return this.#notRecomputed === 0 ? undefined : `${this.#notRecomputed} finding(s) of an external stream: ids not recomputed (no id_basis)`;
  }
}

function recompute(f: Finding): string {
  return findingId({
    analyst_id: f.analyst_id,
    area: f.area,
    subject: { trajectory_key: f.subject.trajectory_key },
    claim: f.claim,
    ...(f.id_basis === undefined ? {} : { id_basis: f.id_basis }),
    treatment: f.treatment,
    conditions: f.conditions,
  });
}

function digest(parts: readonly string[]): string {
  return sha256Hex(parts.join('\u0000')).slice(0, DIGEST_HEX);
}
