import { join } from 'node:path';
import { StorageError } from '../errors.ts';
import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import { recordJson } from '../findings/record-json.ts';
import type { Finding } from '../findings/schema.ts';
import type { FindingSink, FindingStream } from './finding-sink.ts';
import { JsonlLog, type JsonlRetention } from './jsonl-log.ts';
import { REFUSAL } from '../ingest/refusal.ts';
import { FINDINGS_LOG_REFUSALS, logRefusal } from './log-refusal.ts';

/**
 * The embedded default sink: findings and analysis manifests appended to a durable JSON-lines
 * file, and the coordinator alarms among the findings also to an alarms file.
 */
export class LocalLogSink implements FindingSink {
  readonly name = 'local-log';
  readonly #logs: Partial<Record<FindingStream, JsonlLog>>;
  readonly #maxPendingBytes: number;
  #closing: Promise<void> | undefined;
  /** Records handed over after close: never stored, so every later `flushed()` rejects. */
  #refusedAfterClose = 0;

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

  /** The JSON-lines logs it writes (for their disk metrics). */
  logs(): JsonlLog[] {
    return Object.values(this.#logs);
  }

  write(findings: readonly Finding[], stream: FindingStream): void {
    if (this.#closing !== undefined) this.#refusedAfterClose += findings.length;
    else this.#logs[stream]?.append(findings.map(recordJson));
  }

  /** Into the findings log, after the findings it names. */
  writeManifest(manifest: AnalysisManifest): void {
    if (this.#closing !== undefined) this.#refusedAfterClose += 1;
    else this.#logs.findings?.append([recordJson(manifest)]);
  }

  backpressure(): string | undefined {
    if (this.#closing !== undefined) return REFUSAL.findingsLogClosed;
    for (const log of Object.values(this.#logs)) {
      const refusal = logRefusal(log, this.#maxPendingBytes, FINDINGS_LOG_REFUSALS);
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  }

  backlog(): { records: number; bytes: number } {
    let records = 0;
    let bytes = 0;
    for (const log of Object.values(this.#logs)) {
      records += log.lines().pending;
      bytes += log.pendingBytes;
    }
    return { records, bytes };
  }

  /** Rejects, too, once anything was written after close: that was never stored. */
  async flushed(): Promise<void> {
    await Promise.all(Object.values(this.#logs).map((l) => l.flushed()));
    if (this.#refusedAfterClose > 0) {
      throw new StorageError(`findings log closed: ${this.#refusedAfterClose} record(s) written after close were not stored`);
    }
  }

  /** Flushes and closes the logs; later calls wait for the same close. */
  close(): Promise<void> {
    this.#closing ??= Promise.all(Object.values(this.#logs).map((l) => l.close())).then(() => undefined);
    return this.#closing;
  }
}
