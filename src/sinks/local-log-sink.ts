import type { Finding } from '../findings/schema.ts';
import type { FindingSink } from './finding-sink.ts';
import { JsonlLog } from './jsonl-log.ts';

/** The embedded default sink: findings appended to a durable JSON-lines file. */
export class LocalLogSink implements FindingSink {
  readonly name = 'local-log';
  readonly #log: JsonlLog;
  readonly #maxPendingBytes: number;

  constructor(log: JsonlLog, maxPendingBytes: number) {
    this.#log = log;
    this.#maxPendingBytes = maxPendingBytes;
  }

  static async open(path: string, maxPendingBytes: number): Promise<LocalLogSink> {
    return new LocalLogSink(await JsonlLog.open(path), maxPendingBytes);
  }

  /** Bytes appended but not yet durable. */
  get pendingBytes(): number {
    return this.#log.pendingBytes;
  }

  write(findings: readonly Finding[]): void {
    this.#log.append(findings.map((f) => JSON.stringify(f)));
  }

  backpressure(): string | undefined {
    if (this.#log.failure !== undefined) return 'findings-log-unwritable';
    if (this.#log.pendingBytes > this.#maxPendingBytes) return 'findings-log-backlog';
    return undefined;
  }

  flushed(): Promise<void> {
    return this.#log.flushed();
  }

  close(): Promise<void> {
    return this.#log.close();
  }
}
