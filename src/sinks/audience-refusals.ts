import type { AudienceError } from '../findings/audience.ts';
import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import type { Finding } from '../findings/schema.ts';
import type { FindingStream } from './finding-sink.ts';
import type { JsonlLog } from './jsonl-log.ts';
import type { LevelLog } from '../telemetry/logger.ts';

/** The reason every refused external view is counted under. */
export const AUDIENCE_REFUSAL_REASON = 'audience-strip-failed';

/** How many refusals are kept by name for a report (`replay`); the rest are counted. */
export const MAX_LISTED_REFUSALS = 10;

/** One record an external view refused: where, which record, of which kind, and why. */
export interface AudienceRefusal {
  sink: string;
  stream: FindingStream;
  record_kind: 'finding' | 'analysis-manifest';
  id: string;
  /** `analyst_id/observation` for a finding (`layered-walk/layer-question`), `analysis-manifest` for a manifest. */
  kind: string;
  reason: string;
}

/**
 * Every record whose external view could not be trusted (`AudienceError`), for all sinks of a
 * process. A refused record is never shipped to the external sink; it is kept whole in the
 * internal quarantine log (`<dataDir>/audience-refused.jsonl`: the refusal and the record, one
 * line each), counted by sink and kind, and its sink's first one is logged. It is not
 * backpressure: a schema bug must not stall ingestion, and the rest of the stream carries on.
 * `replay` exits 1 naming them; `trajwatch_audience_refused_total` counts them in serve.
 */
export class AudienceRefusals {
  readonly #quarantine: JsonlLog | undefined;
  readonly #log: LevelLog;
  readonly #counts = new Map<string, { sink: string; kind: string; count: number }>();
  readonly #listed: AudienceRefusal[] = [];
  readonly #loggedSinks = new Set<string>();
  #count = 0;

  /** `quarantine` absent: counted and logged only (a sink used on its own, in a test). */
  constructor(quarantine?: JsonlLog, log: LevelLog = () => {}) {
    this.#quarantine = quarantine;
    this.#log = log;
  }

  /** Records `record` as refused by `sink`'s external view on `stream`, and keeps it in the quarantine log. */
  refuse(sink: string, stream: FindingStream, record: Finding | AnalysisManifest, err: AudienceError): void {
    const manifest = 'record_kind' in record;
    const refusal: AudienceRefusal = {
      sink,
      stream,
      record_kind: manifest ? 'analysis-manifest' : 'finding',
      id: manifest ? record.manifest_id : record.finding_id,
      kind: manifest
        ? 'analysis-manifest'
        : `${record.analyst_id}/${record.observation?.kind === 'record' ? record.observation.name : (record.observation?.kind ?? 'none')}`,
      reason: err.message,
    };
    this.#count++;
    const key = `${sink}\u0000${refusal.kind}`;
    const counted = this.#counts.get(key);
    if (counted === undefined) this.#counts.set(key, { sink, kind: refusal.kind, count: 1 });
    else counted.count++;
    if (this.#listed.length < MAX_LISTED_REFUSALS) this.#listed.push(refusal);
    this.#quarantine?.append([JSON.stringify({ refusal: AUDIENCE_REFUSAL_REASON, ...refusal, record })]);
    if (!this.#loggedSinks.has(sink)) {
      this.#loggedSinks.add(sink);
      this.#log('error', 'external view refused: record kept in the internal quarantine log, not written to this sink (later refusals counted, not logged)', {
        ...refusal,
        quarantine: this.#quarantine?.path ?? null,
      });
    }
  }

  /** Records refused so far, all sinks. */
  get count(): number {
    return this.#count;
  }

  /** Refusals by sink and kind. */
  counts(): { sink: string; kind: string; count: number }[] {
    return [...this.#counts.values()].map((c) => ({ ...c }));
  }

  /** The first `MAX_LISTED_REFUSALS` refusals, in order. */
  listed(): readonly AudienceRefusal[] {
    return this.#listed;
  }

  /** The quarantine log's path, when there is one. */
  get quarantinePath(): string | undefined {
    return this.#quarantine?.path;
  }

  /** Set while the quarantine log cannot write (its lines stay queued and are retried). */
  get failure(): Error | undefined {
    return this.#quarantine?.failure;
  }

  flushed(): Promise<void> {
    return this.#quarantine?.flushed() ?? Promise.resolve();
  }

  close(): Promise<void> {
    return this.#quarantine?.close() ?? Promise.resolve();
  }
}

/** What `replay` prints about refusals: one line for the count and where they are kept, one per listed refusal. */
export function refusalLines(refusals: AudienceRefusals): string[] {
  if (refusals.count === 0) return [];
  const where = refusals.quarantinePath === undefined ? '' : `; each kept whole in ${refusals.quarantinePath}`;
  const lines = [`${refusals.count} record(s) refused by an external view (${AUDIENCE_REFUSAL_REASON}), not written to that sink${where}`];
  for (const r of refusals.listed()) lines.push(`refused: ${r.sink} ${r.stream}: ${r.record_kind} ${r.id} (${r.kind}): ${r.reason}`);
  if (refusals.count > refusals.listed().length) lines.push(`refused: ${refusals.count - refusals.listed().length} more, counted`);
  return lines;
}
