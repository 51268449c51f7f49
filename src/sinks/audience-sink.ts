import { z } from 'zod';
import { AUDIENCES, AudienceError, audienceView, type Audience } from '../findings/audience.ts';
import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import type { Finding } from '../findings/schema.ts';
import { AudienceRefusals } from './audience-refusals.ts';
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

/**
 * A sink that writes each stream in its configured view: the audience strip happens here,
 * before the record reaches the sink's durable storage, so an external topic or log never
 * holds an internal field, not even in its outbox. A strip that cannot be trusted
 * (`AudienceError`) never ships: that record goes to `AudienceRefusals` (kept whole in the
 * internal quarantine log, counted by sink and kind, the first logged) and the rest of the
 * stream carries on. It is not backpressure: ingestion never stalls on a schema bug.
 */
export class AudienceSink implements FindingSink {
  readonly name: string;
  readonly audiences: StreamAudiences;
  readonly writeManifest?: (manifest: AnalysisManifest) => void;
  readonly #inner: FindingSink;
  readonly #refusals: AudienceRefusals;
  /** Records of this sink whose external view could not be made: refused, never written here. */
  #refused = 0;

  constructor(inner: FindingSink, audiences: StreamAudiences, refusals: AudienceRefusals = new AudienceRefusals()) {
    this.#inner = inner;
    this.name = inner.name;
    this.audiences = audiences;
    this.#refusals = refusals;
    // Only a sink that takes manifests gets them: `writeManifest` stays absent otherwise.
    if (inner.writeManifest !== undefined) {
      this.writeManifest = (m) => {
        const [view] = this.#views([m], audiences.findings, 'findings');
        if (view !== undefined) inner.writeManifest!(view);
      };
    }
  }

  /** How many records this sink refused because their external view could not be trusted. */
  get refused(): number {
    return this.#refused;
  }

  write(findings: readonly Finding[], stream: FindingStream): void {
    const audience: Audience = this.audiences[stream];
    const views = audience === 'internal' ? findings : this.#views(findings, audience, stream);
    if (views.length > 0) this.#inner.write(views, stream);
  }

  #views<T extends Finding | AnalysisManifest>(records: readonly T[], audience: Audience, stream: FindingStream): T[] {
    return records.flatMap((r) => {
      try {
        return [audienceView(r, audience)];
      } catch (err) {
        if (!(err instanceof AudienceError)) throw err;
        this.#refused += 1;
        this.#refusals.refuse(this.name, stream, r, err);
        return [];
      }
    });
  }

  backpressure(): string | undefined {
    return this.#inner.backpressure();
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

/** Whether a stream of these is external (so the process needs the quarantine log). */
export function anyExternal(audiences: StreamAudiences): boolean {
  return audiences.findings === 'external' || audiences.alarms === 'external';
}

/** `sink` in the configured views: itself when every stream is internal. */
export function withAudience(sink: FindingSink, audiences: StreamAudiences, refusals?: AudienceRefusals): FindingSink {
  return anyExternal(audiences) ? new AudienceSink(sink, audiences, refusals) : sink;
}
