import { followLines } from '../../storage/follow-lines.ts';
import { type Component, once } from '../component.ts';

/** How often the file is looked at again for new lines (or for appearing). */
export const FOLLOW_POLL_MS = 200;

/**
 * Follows a JSON-lines log (`tail`) across its rotations, handing whole lines to `print`
 * until it returns false or the component stops; waits for the log to appear, starts over
 * when a file shrinks. `done` resolves when following ended, for either reason.
 */
export class FileFollower implements Component {
  readonly name = 'tail.file';
  readonly #path: string;
  readonly #fromStart: boolean;
  readonly #print: (line: string) => boolean;
  readonly #abort = new AbortController();
  #loop: Promise<void> = Promise.resolve();
  #ended!: () => void;
  readonly done = new Promise<void>((resolve) => (this.#ended = resolve));

  constructor(path: string, fromStart: boolean, print: (line: string) => boolean) {
    this.#path = path;
    this.#fromStart = fromStart;
    this.#print = print;
  }

  async start(): Promise<void> {
    this.#loop = this.#follow().finally(() => this.#ended());
  }

  readonly stop = once(async () => {
    this.#abort.abort();
    this.#ended();
    await this.#loop;
  });

  health(): string | undefined {
    return undefined;
  }

  /** Across the log's rotations (`followLines`): closed files read to their end, then the next. */
  async #follow(): Promise<void> {
    for await (const line of followLines(this.#path, { fromStart: this.#fromStart, pollMs: FOLLOW_POLL_MS, signal: this.#abort.signal })) {
      if (!this.#print(line)) return;
    }
  }
}
