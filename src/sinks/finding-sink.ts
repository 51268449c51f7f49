import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import type { Finding } from '../findings/schema.ts';

/** Which stream a finding goes to: every finding, or the coordinator alarms among them. */
export type FindingStream = 'findings' | 'alarms';

/**
 * A line of the findings log or a message of the findings topic: a finding, or the analysis
 * manifest of a trajectory revision (told apart by its `record_kind`; a finding has none).
 */
export type FindingLogRecord = Finding | AnalysisManifest;

/** True for an analysis manifest, false for a finding. */
export function isManifest(record: FindingLogRecord): record is AnalysisManifest {
  return 'record_kind' in record;
}

/**
 * Where findings go. Every implementation keeps order and never drops: when it cannot keep
 * up it says so through `backpressure()`, and the receiver refuses new work until it can.
 */
export interface FindingSink {
  readonly name: string;
  write(findings: readonly Finding[], stream: FindingStream): void;
  /**
   * The analysis manifest of a closed trajectory revision, written after the findings it
   * names, to the findings stream. Optional: a sink without it carries findings only, so a
   * consumer of findings never meets a record of another kind through `write`.
   */
  writeManifest?(manifest: AnalysisManifest): void;
  /** A reason to refuse new input now (backlog full, storage failing), or undefined. */
  backpressure(): string | undefined;
  /** Records not yet durable (local log) or acknowledged (Kafka). */
  backlog(): { records: number; bytes: number };
  /** Resolves when everything written so far is durable (local log) or acknowledged (Kafka). */
  flushed(): Promise<void>;
  close(): Promise<void>;
}
