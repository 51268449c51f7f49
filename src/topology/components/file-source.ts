import { type FileInput, feedFiles, type FileSourceReport, type FileSourceResult } from '../../ingest/file-source.ts';
import { type Component, once } from '../component.ts';

/** What the file source tells when its files are all read: the pipeline stage (`PipelineStage.endOfInput`). */
export interface InputEnd {
  endOfInput(): Promise<void>;
}

/**
 * Recorded OTLP files as a source (`replay`). Started (after the pipeline stage), it feeds the
 * files in order and then ends the input: what is still open closes as `end-of-input` and
 * every queued window is judged, so the stage's stop has nothing left to drain. `done`
 * resolves after that, with how many files were read; it rejects when feeding or the end of
 * input failed.
 */
export class FileSourceComponent implements Component {
  readonly name = 'source.files';
  readonly #paths: readonly string[];
  readonly #input: FileInput;
  readonly #end: InputEnd;
  readonly #report: FileSourceReport;
  readonly #abort = new AbortController();
  readonly #done = Promise.withResolvers<FileSourceResult>();
  #feeding: Promise<void> | undefined;

  constructor(paths: readonly string[], input: FileInput, end: InputEnd, report: FileSourceReport) {
    this.#paths = paths;
    this.#input = input;
    this.#end = end;
    this.#report = report;
  }

  /** The files fed and the input ended: how many were read, how many failed. */
  get done(): Promise<FileSourceResult> {
    return this.#done.promise;
  }

  async start(): Promise<void> {
    this.#feeding = this.#feed().then(this.#done.resolve, this.#done.reject);
  }

  readonly stop = once(async () => {
    this.#abort.abort();
    // Stopped before it started: nothing was fed, and nothing ends.
    if (this.#feeding === undefined) this.#done.resolve({ read: 0, failures: 0 });
    await this.#feeding;
  });

  health(): string | undefined {
    return undefined;
  }

  async #feed(): Promise<FileSourceResult> {
    const result = await feedFiles(this.#paths, this.#input, this.#report, this.#abort.signal);
    // Stopped part-way (the topology is stopping): the input did not end, the stage drains on shutdown.
    if (!this.#abort.signal.aborted) await this.#end.endOfInput();
    return result;
  }
}
