import type { Pipeline } from '../../pipeline/pipeline.ts';
import { type Component, once } from '../component.ts';

/** How often `serve` asks the pipeline to close what is due (quiet period, idle timeout). */
export const TICK_MS = 100;

/**
 * The pipeline as a component. Started: with the arrival clock a timer closes due
 * trajectories every {@link TICK_MS}. Stopped (after the sources): everything still open
 * closes as incomplete (`shutdown`) unless the input ended ({@link endOfInput}), the judge
 * defers what is queued, and the stop resolves once every output is durable, so the WAL
 * behind it can be released to its end.
 */
export class PipelineStage implements Component {
  readonly name: string;
  readonly pipeline: Pipeline;
  readonly #tickMs: number | undefined;
  #ticker: NodeJS.Timeout | undefined;
  #started = false;
  #ended: Promise<void> | undefined;

  /** `tickMs` undefined: no timer (replay, where the spans' own times close trajectories). */
  constructor(pipeline: Pipeline, tickMs: number | undefined, name = 'pipeline') {
    this.name = name;
    this.pipeline = pipeline;
    this.#tickMs = tickMs;
  }

  async start(): Promise<void> {
    this.#started = true;
    if (this.#tickMs !== undefined) this.#ticker = setInterval(() => this.pipeline.tick(), this.#tickMs);
  }

  /**
   * The input ended (a file source read its last file): everything open closes as
   * `end-of-input` and every queued window is judged. The stop after it drains nothing again.
   */
  endOfInput(): Promise<void> {
    this.#ended ??= this.pipeline.drain('end-of-input');
    return this.#ended;
  }

  readonly stop = once(async () => {
    clearInterval(this.#ticker);
    // Never started: nothing is flushed in its name (what the WAL replayed into it stays in the WAL).
    if (!this.#started) return;
    await (this.#ended ?? this.pipeline.drain('shutdown'));
    await this.pipeline.settled();
  });

  /** The topology failed to start: no drain, so nothing closes as `shutdown` and the WAL keeps what it replayed. */
  readonly abort = once(async () => {
    clearInterval(this.#ticker);
    this.#started = false;
    await this.stop();
  });

  health(): string | undefined {
    return this.pipeline.assembler.admission();
  }
}
