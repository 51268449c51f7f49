/**
 * Admitted judge calls waiting for a slot, and the work in flight. Bounds: at most
 * `maxConcurrent` calls run at once (`judge.budget.maxConcurrent`); the wait queue's length is
 * bounded at admission (`judge.budget.maxQueuedWindows`: the budget defers `queue-full` before
 * a job is pushed), so `push` itself never refuses. When stopped, nothing more is dispatched
 * and `stop()` hands the waiting jobs back for the caller to record as deferred.
 *
 * `run` must settle its job whatever happens; should it reject anyway, `onFailure` is told and
 * the slot is freed. Other background work (ledger audit appends) is `track`ed so `drain`
 * waits for it too.
 */
export class CallQueue<J> {
  readonly #maxConcurrent: number;
  readonly #run: (job: J) => Promise<void>;
  readonly #onFailure: (job: J, err: unknown) => void;
  readonly #waiting: J[] = [];
  readonly #active = new Set<Promise<void>>();
  #inFlight = 0;
  #stopped = false;

  constructor(maxConcurrent: number, run: (job: J) => Promise<void>, onFailure: (job: J, err: unknown) => void) {
    this.#maxConcurrent = maxConcurrent;
    this.#run = run;
    this.#onFailure = onFailure;
  }

  /** Jobs waiting for a slot. */
  get length(): number {
    return this.#waiting.length;
  }

  /** Jobs running now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Queue a job; call `pump` once the caller has pushed what it has. */
  push(job: J): void {
    this.#waiting.push(job);
  }

  /** Start waiting jobs while a slot is free, in the order they were pushed. */
  pump(): void {
    while (!this.#stopped && this.#inFlight < this.#maxConcurrent && this.#waiting.length > 0) {
      const job = this.#waiting.shift()!;
      this.#inFlight++;
      const p = this.#run(job)
        .catch((err: unknown) => this.#onFailure(job, err))
        .finally(() => {
          this.#inFlight--;
          this.#active.delete(p);
          this.pump();
        });
      this.#active.add(p);
    }
  }

  /** Background work `drain` must wait for; its rejection is the caller's to handle first. */
  track(p: Promise<void>): void {
    const tracked = p.finally(() => this.#active.delete(tracked));
    this.#active.add(tracked);
  }

  /** Dispatch nothing more; waiting jobs stay until `stop`. */
  halt(): void {
    this.#stopped = true;
  }

  /** Dispatch nothing more; returns the jobs that were waiting (never started). */
  stop(): J[] {
    this.halt();
    return this.#waiting.splice(0);
  }

  /** Resolves when nothing is running or tracked. */
  async drain(): Promise<void> {
    while (this.#active.size > 0) await Promise.allSettled([...this.#active]);
  }
}
