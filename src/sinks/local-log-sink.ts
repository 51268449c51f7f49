import { join } from 'node:path';
import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import type { Finding } from '../findings/schema.ts';
import type { FindingSink, FindingStream } from './finding-sink.ts';
import { JsonlLog, type JsonlRetention } from './jsonl-log.ts';

/**
 * The embedded default sink: findings and analysis manifests appended to a durable JSON-lines
 * file, and the coordinator alarms among the findings also to an alarms file.
 */
export class LocalLogSink implements FindingSink {
  readonly name = 'local-log';
  readonly #logs: Partial<Record<FindingStream, JsonlLog>>;
  readonly #maxPendingBytes: number;

  /** Without an alarms log, alarms are kept only as the findings they also are. */
  constructor(findings: JsonlLog, alarms: JsonlLog | undefined, maxPendingBytes: number) {
    this.#logs = alarms === undefined ? { findings } : { findings, alarms };
    this.#maxPendingBytes = maxPendingBytes;
  }

  /** `findings.jsonl` and `alarms.jsonl` in `dir`. */
  static async open(dir: string, maxPendingBytes: number): Promise<LocalLogSink> {
    return LocalLogSink.openFiles(join(dir, 'findings.jsonl'), join(dir, 'alarms.jsonl'), maxPendingBytes);
  }

  static async openFiles(
    findingsPath: string,
    alarmsPath: string | undefined,
    maxPendingBytes: number,
    options: { truncate?: boolean; findings?: JsonlRetention | undefined; alarms?: JsonlRetention | undefined } = {},
  ): Promise<LocalLogSink> {
    const { truncate } = options;
    return new LocalLogSink(
      await JsonlLog.open(findingsPath, { truncate, retention: options.findings }),
      alarmsPath === undefined ? undefined : await JsonlLog.open(alarmsPath, { truncate, retention: options.alarms }),
      maxPendingBytes,
    );
  }

  write(findings: readonly Finding[], stream: FindingStream): void {
    this.#logs[stream]?.append(findings.map((f) => JSON.stringify(f)));
  }

  /** Into the findings log, after the findings it names. */
  writeManifest(manifest: AnalysisManifest): void {
    this.#logs.findings?.append([JSON.stringify(manifest)]);
  }

  backpressure(): string | undefined {
    for (const log of Object.values(this.#logs)) {
      if (log.failure !== undefined) return 'findings-log-unwritable';
      if (log.pendingBytes > this.#maxPendingBytes) return 'findings-log-backlog';
    }
    return undefined;
  }

  backlog(): { records: number; bytes: number } {
    let records = 0;
    let bytes = 0;
    for (const log of Object.values(this.#logs)) {
      records += log.pendingLines;
      bytes += log.pendingBytes;
    }
    return { records, bytes };
  }

  async flushed(): Promise<void> {
    await Promise.all(Object.values(this.#logs).map((l) => l.flushed()));
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.#logs).map((l) => l.close()));
  }
}
