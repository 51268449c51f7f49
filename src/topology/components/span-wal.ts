import type { DurableIngest } from '../../ingest/wal/durable-ingest.ts';
import type { WalRecord } from '../../ingest/wal/span-wal.ts';
import type { Logger } from '../../telemetry/logger.ts';
import { type Component, once } from '../component.ts';

/**
 * The span write-ahead log in front of the pipeline. Opened by the builder; started before the
 * receivers listen, it replays what the last run left (decoded as when it arrived, under the
 * same sequence numbers); stopped after the pipeline drained and settled, it is released to
 * its end and closed.
 */
export class SpanWalComponent implements Component {
  readonly name = 'span-wal';
  readonly ingest: DurableIngest;
  /** `receiver.wal.maxBytes`: past it the WAL answers `full` and the receivers refuse. */
  readonly backlogLimit: { bytes: number };
  #records: AsyncIterable<WalRecord> | undefined;
  readonly #logger: Logger;

  constructor(ingest: DurableIngest, records: AsyncIterable<WalRecord>, logger: Logger, maxBytes: number) {
    this.ingest = ingest;
    this.backlogLimit = { bytes: maxBytes };
    this.#records = records;
    this.#logger = logger;
  }

  async start(): Promise<void> {
    // Streamed: the log is read a chunk at a time as the requests are fed to the pipeline.
    const { replayed, undecodable } = await this.ingest.replay(this.#records ?? []);
    this.#records = undefined;
    const torn = this.ingest.wal.stats().tornRecords;
    if (replayed > 0 || undecodable > 0 || torn > 0) {
      this.#logger.info(
        { replayed, undecodable, tornRecords: torn },
        `replayed ${replayed} request(s) from the write-ahead log` +
          (undecodable > 0 ? `, ${undecodable} undecodable skipped` : '') +
          (torn > 0 ? `, ${torn} torn final record cut off` : ''),
      );
    }
  }

  readonly stop = once(() => this.ingest.close());

  health(): string | undefined {
    return this.ingest.wal.refusal();
  }

  backlog(): { bytes: number } {
    return { bytes: this.ingest.wal.pendingBytes };
  }
}
