import { AudienceError, INTERNAL_FIELDS, stripInternal } from '../findings/audience.ts';
import type { Checker } from './checker.ts';
import type { FindingsSource, StreamRecord } from './records.ts';
import { type RecordLocation, ViolationList } from './violation.ts';

/** The key names of internal fields: an external record holds none of them at any depth. */
const INTERNAL_NAMES: ReadonlySet<string> = new Set([...INTERNAL_FIELDS.finding, ...INTERNAL_FIELDS.manifest].map((p) => p.split('.').at(-1)!));

/**
 * `audience-strip`: every finding and manifest can be given to an external audience. A record
 * of an internal stream goes through the real strip (`stripInternal`, what every external
 * sink, `tail --audience external` and the label page call) and must come out without an
 * `AudienceError`; a record of an external stream must already hold no internal field. A
 * record the running service could not strip sits in `audience-refused.jsonl`: each is a
 * violation too (it was kept from the external stream, and its consumers never saw it).
 */
export class AudienceStrip implements Checker {
  readonly id = 'audience-strip' as const;
  readonly violations = new ViolationList(this.id);
  checked = 0;

  record(r: StreamRecord, source: FindingsSource): void {
    this.checked++;
    const key = r.record.subject.trajectory_key;
    if (source.audience === 'external') {
      const leak = internalKey(r.record);
      if (leak !== undefined) this.violations.add(r.at, `${source.name} is an external stream and this ${r.kind} carries the internal field ${leak}`, key);
      return;
    }
    try {
      stripInternal(r.record);
    } catch (err) {
      if (!(err instanceof AudienceError)) throw err;
      this.violations.add(r.at, `its external view cannot be made: ${err.message}`, key);
    }
  }

  refused(line: unknown, at: RecordLocation): void {
    this.checked++;
    const l = (typeof line === 'object' && line !== null ? line : {}) as {
      sink?: unknown;
      id?: unknown;
      reason?: unknown;
      record?: { subject?: { trajectory_key?: unknown } };
    };
    const key = l.record?.subject?.trajectory_key;
    this.violations.add(
      at,
      `sink ${String(l.sink)} refused the external view of ${String(l.id)} (kept whole here, never sent to its external stream): ${String(l.reason)}`,
      typeof key === 'string' ? key : undefined,
    );
  }
}

/** The first path at which a key is an internal field's name. */
function internalKey(node: unknown, at = ''): string | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  for (const [k, v] of Object.entries(node)) {
    const here = at === '' ? k : `${at}.${k}`;
    if (!Array.isArray(node) && INTERNAL_NAMES.has(k)) return here;
    const deeper = internalKey(v, here);
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}
