import { z } from 'zod';
import { AUDIENCES, audienceView, type Audience } from '../findings/audience.ts';
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

/**
 * A sink that writes each stream in its configured view: the audience strip happens here,
 * before the record reaches the sink's durable storage, so an external topic or log never
 * holds an internal field, not even in its outbox. A strip that cannot be trusted throws
 * (`AudienceError`) out of `write`: loud, never a silent leak.
 */
export class AudienceSink implements FindingSink {
  readonly name: string;
  readonly audiences: StreamAudiences;
  readonly writeManifest?: (manifest: AnalysisManifest) => void;
  readonly #inner: FindingSink;

  constructor(inner: FindingSink, audiences: StreamAudiences) {
    this.#inner = inner;
    this.name = inner.name;
    this.audiences = audiences;
    // Only a sink that takes manifests gets them: `writeManifest` stays absent otherwise.
    if (inner.writeManifest !== undefined) {
      this.writeManifest = (m) => inner.writeManifest!(audienceView(m, audiences.findings));
    }
  }

  write(findings: readonly Finding[], stream: FindingStream): void {
    const audience: Audience = this.audiences[stream];
    this.#inner.write(audience === 'internal' ? findings : findings.map((f) => audienceView(f, audience)), stream);
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

/** `sink` in the configured views: itself when every stream is internal. */
export function withAudience(sink: FindingSink, audiences: StreamAudiences): FindingSink {
  return audiences.findings === 'internal' && audiences.alarms === 'internal' ? sink : new AudienceSink(sink, audiences);
}
