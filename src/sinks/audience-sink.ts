import { z } from 'zod';
import { AUDIENCES, AudienceError, audienceView, type Audience } from '../findings/audience.ts';
import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import type { Finding } from '../findings/schema.ts';
import type { FindingSink, FindingStream } from './finding-sink.ts';

/**
 * Which view each stream of a sink carries: `internal` (everything, the default) or `external`
 * (docs/consumers.md "Audience"). Manifests go with the findings stream.
 */
export const StreamAudiencesSchema = z
  .strictObject({
    findings: z.enum(AUDIENCES).default('internal'),
    alarms: z.enum(AUDIENCES).default('internal'),
  })
  .prefault({});

export type StreamAudiences = z.infer<typeof StreamAudiencesSchema>;

/** Where a refused strip is reported (the sink's logger in serve). */
export type AudienceLog = (message: string, context: Record<string, unknown>) => void;

/**
 * A sink that writes each stream in its configured view: the audience strip happens here,
 * before the record reaches the sink's durable storage, so an external topic or log never
 * holds an internal field, not even in its outbox. A strip that cannot be trusted
 * (`AudienceError`) never ships: that record is refused, counted and logged with the reason,
 * and the sink reports `audience-strip-failed` as backpressure from then on, so serve refuses
 * new input and `/healthz` says why until an operator fixes the schema (a code bug, not an
 * input one). The other records, and the other sinks, carry on.
 */
export class AudienceSink implements FindingSink {
  readonly name: string;
  readonly audiences: StreamAudiences;
  readonly writeManifest?: (manifest: AnalysisManifest) => void;
  readonly #inner: FindingSink;
  readonly #log: AudienceLog;
  /** Records whose external view could not be made: refused, never written. */
  #refused = 0;

  constructor(inner: FindingSink, audiences: StreamAudiences, log: AudienceLog = () => {}) {
    this.#inner = inner;
    this.name = inner.name;
    this.audiences = audiences;
    this.#log = log;
    // Only a sink that takes manifests gets them: `writeManifest` stays absent otherwise.
    if (inner.writeManifest !== undefined) {
      this.writeManifest = (m) => {
        const [view] = this.#views([m], audiences.findings);
        if (view !== undefined) inner.writeManifest!(view);
      };
    }
  }

  /** How many records were refused because their external view could not be trusted. */
  get refused(): number {
    return this.#refused;
  }

  write(findings: readonly Finding[], stream: FindingStream): void {
    const audience: Audience = this.audiences[stream];
    const views = audience === 'internal' ? findings : this.#views(findings, audience);
    if (views.length > 0) this.#inner.write(views, stream);
  }

  #views<T extends Finding | AnalysisManifest>(records: readonly T[], audience: Audience): T[] {
    return records.flatMap((r) => {
      try {
        return [audienceView(r, audience)];
      } catch (err) {
        if (!(err instanceof AudienceError)) throw err;
        this.#refused += 1;
        this.#log('external view refused: record not written', {
          sink: this.name,
          id: 'record_kind' in r ? r.manifest_id : r.finding_id,
          reason: err.message,
        });
        return [];
      }
    });
  }

  backpressure(): string | undefined {
    return this.#refused > 0 ? 'audience-strip-failed' : this.#inner.backpressure();
  }

  backlog(): { records: number; bytes: number } {
    return this.#inner.backlog();
  }

  flushed(): Promise<void> {
    return this.#inner.flushed();
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** `sink` in the configured views: itself when every stream is internal. */
export function withAudience(sink: FindingSink, audiences: StreamAudiences, log?: AudienceLog): FindingSink {
  return audiences.findings === 'internal' && audiences.alarms === 'internal' ? sink : new AudienceSink(sink, audiences, log);
}
