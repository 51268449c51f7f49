import type { Finding } from '../findings/schema.ts';

/** Which stream a finding goes to: every finding, or the coordinator alarms among them. */
export type FindingStream = 'findings' | 'alarms';

/**
 * Where findings go. Every implementation keeps order and never drops: when it cannot keep
 * up it says so through `backpressure()`, and the receiver refuses new work until it can.
 */
export interface FindingSink {
  readonly name: string;
  write(findings: readonly Finding[], stream: FindingStream): void;
  /** A reason to refuse new input now (backlog full, storage failing), or undefined. */
  backpressure(): string | undefined;
  /** Records not yet durable (local log) or acknowledged (Kafka). */
  backlog(): { records: number; bytes: number };
  /** Resolves when everything written so far is durable (local log) or acknowledged (Kafka). */
  flushed(): Promise<void>;
  close(): Promise<void>;
}
