import { open } from 'node:fs/promises';
import { type Component, once } from '../component.ts';

/** How often the file is looked at again for new lines (or for appearing). */
export const FOLLOW_POLL_MS = 200;

/**
 * Follows an append-only JSON-lines file (`tail`), handing whole lines to `print` until it
 * returns false or the component stops; waits for the file to appear, starts over when it
 * shrinks. `done` resolves when following ended, for either reason.
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

  async #follow(): Promise<void> {
    const signal = this.#abort.signal;
    let position: number | undefined;
    let partial = '';
    while (!signal.aborted) {
      const file = await open(this.#path, 'r').catch(() => undefined);
      if (file !== undefined) {
        try {
          const { size } = await file.stat();
          position ??= this.#fromStart ? 0 : size;
          if (size < position) position = 0;
          if (size > position) {
            const buffer = Buffer.alloc(size - position);
            await file.read(buffer, 0, buffer.length, position);
            position = size;
            const lines = (partial + buffer.toString('utf8')).split('\n');
            partial = lines.pop()!;
            for (const line of lines) if (line !== '' && !this.#print(line)) return;
          }
        } finally {
          await file.close();
        }
      } else position ??= 0;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FOLLOW_POLL_MS);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }
}
