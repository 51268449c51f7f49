import type { RevisionLog } from '../assemble/revision-log.ts';
import type { RememberedRevision, RevisionMemory } from '../assemble/revision-memory.ts';
import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import type { FindingSink } from './finding-sink.ts';
import { REFUSAL } from '../ingest/refusal.ts';

/** How long to wait before trying again when the other outputs failed to become durable. */
const RETRY_MS = 1_000;

/**
 * The closed-revision memory as the last of the pipeline's sinks. The assembler tells it of
 * each closed revision ({@link RevisionMemory}); the revision's manifest — the last thing the
 * pipeline writes for it, after its inline and judged findings — makes it ready; it is
 * appended to the log only once everything else written so far (trajectory log, findings
 * sinks) is durable. So a restart never remembers a revision whose output a crash lost: its
 * spans, replayed from the write-ahead log or a Kafka offset, rebuild it. And since the
 * pipeline releases source positions only after every sink's `flushed()`, this one's
 * included, the write-ahead log never lets go of a revision the memory does not yet hold.
 */
export class RevisionMemorySink implements FindingSink, RevisionMemory {
  readonly name = 'revision-memory';
  readonly #log: RevisionLog;
  readonly #othersFlushed: () => Promise<void>;
  /**
   * Closed, manifest not yet written: `${revision} ${key}` → what to remember, in close order
   * (a key forgotten while its judge call is out can close a `previous-revision-unknown` revision 1 again).
   */
  readonly #pending = new Map<string, RememberedRevision[]>();
  #pendingCount = 0;
  #ready: RememberedRevision[] = [];
  /** Taken from `#ready`, waiting for the other outputs. */
  #waiting = 0;
  #writing: Promise<void> = Promise.resolve();
  #scheduled = false;
  #closed = false;

  /** `othersFlushed`: resolves once every other output written so far is durable. */
  constructor(log: RevisionLog, othersFlushed: () => Promise<void>) {
    this.#log = log;
    this.#othersFlushed = othersFlushed;
  }

  closed(r: RememberedRevision): void {
    const id = `${r.revision} ${r.key}`;
    const waiting = this.#pending.get(id);
    if (waiting === undefined) this.#pending.set(id, [r]);
    else waiting.push(r);
    this.#pendingCount++;
  }

  write(): void {}

  writeManifest(manifest: AnalysisManifest): void {
    const id = `${manifest.subject.revision} ${manifest.subject.trajectory_key}`;
    const waiting = this.#pending.get(id);
    if (waiting === undefined) return;
    if (waiting.length === 1) this.#pending.delete(id);
    this.#ready.push(waiting.shift()!);
    this.#pendingCount--;
    if (this.#scheduled) return;
    this.#scheduled = true;
    // Never rejects: a failing log shows in `flushed()` and `backpressure()`, the chain goes on.
    this.#writing = this.#writing.then(() => this.#writeReady()).catch(() => undefined);
  }

  backpressure(): string | undefined {
    if (this.#closed) return REFUSAL.revisionMemoryClosed;
    return this.#log.failure === undefined ? undefined : REFUSAL.revisionMemoryUnwritable;
  }

  backlog(): { records: number; bytes: number } {
    const pending = this.#log.pending;
    return { records: this.#pendingCount + this.#ready.length + this.#waiting + pending.records, bytes: pending.bytes };
  }

  async flushed(): Promise<void> {
    await this.#writing;
    await this.#log.flushed();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#writing;
    await this.#log.close();
  }

  /** Waits for the other outputs, then appends what was ready when it began waiting. */
  async #writeReady(): Promise<void> {
    // Manifests of the same turn join this batch.
    await Promise.resolve();
    this.#scheduled = false;
    const batch = this.#ready;
    this.#ready = [];
    this.#waiting = batch.length;
    for (;;) {
      try {
        await this.#othersFlushed();
        break;
      } catch {
        // A failing output is reported through its own backpressure; the memory waits for it.
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
    this.#waiting = 0;
    this.#log.append(batch);
  }
}
