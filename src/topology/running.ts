import { FaultLog } from '../telemetry/fault-log.ts';
import type { Logger } from '../telemetry/logger.ts';
import type { Component } from './component.ts';

/** How often each component's health is read for the fault log (a read is a few field loads). */
export const HEALTH_POLL_MS = 1_000;

/** How the stop ended: every component stopped, one failed (the rest still stopped), or the bound ran out. */
export type StopOutcome = { outcome: 'stopped' } | { outcome: 'failed'; error: Error } | { outcome: 'timeout'; timeoutMs: number };

/**
 * Components started in dependency order and stopped in reverse (Vector's `RunningTopology`).
 * Components come in layers; a layer starts once every layer before it has started, and its
 * members start (and stop) concurrently. The builder's layers are sinks, then the judge, then
 * the span WAL, then the pipeline stage, then the sources — so on stop the sources go quiet
 * first, the pipeline drains into outputs that are still open, the WAL is released once that
 * output is durable, and the judge and sinks close last. When a start fails, everything
 * (started or only built) is stopped in reverse — aborted where a component can abort —
 * and the failure is thrown.
 */
export class RunningTopology {
  readonly layers: readonly (readonly Component[])[];
  readonly #logger: Logger;
  readonly #faults: Map<Component, FaultLog>;
  #poll: NodeJS.Timeout | undefined;
  #started = false;
  #stopping: Promise<StopOutcome> | undefined;

  constructor(layers: readonly (readonly Component[])[], logger: Logger) {
    this.layers = layers.filter((l) => l.length > 0);
    this.#logger = logger;
    this.#faults = new Map(this.components.map((c) => [c, new FaultLog(logger.child({ component: c.name }), `${c.name} unhealthy`)]));
  }

  /** Every component, in start order. */
  get components(): Component[] {
    return this.layers.flat();
  }

  /** Starts the layers in order; on a failure stops everything in reverse and throws the first failure. */
  async start(): Promise<void> {
    for (const layer of this.layers) {
      const results = await Promise.allSettled(layer.map((c) => c.start()));
      const failed = results.findIndex((r) => r.status === 'rejected');
      if (failed === -1) continue;
      const err = (results[failed] as PromiseRejectedResult).reason as unknown;
      this.#logger.error({ component: layer[failed]!.name, err }, `${layer[failed]!.name} failed to start; stopping`);
      this.#stopping = this.#stopAll('abort');
      await this.#stopping;
      throw err;
    }
    this.#poll = setInterval(() => this.checkHealth(), HEALTH_POLL_MS);
    this.#poll.unref();
    this.#started = true;
  }

  /** True once every layer started, until the stop begins (`/readyz`). */
  get started(): boolean {
    return this.#started && this.#stopping === undefined;
  }

  /** Reads every component's health once; the first unhealthy reading and the recovery are logged. */
  checkHealth(): void {
    for (const [c, faults] of this.#faults) faults.observe(c.health());
  }

  /** The first unhealthy component's reason, or undefined. */
  health(): { component: string; reason: string } | undefined {
    for (const c of this.#faults.keys()) {
      const reason = c.health();
      if (reason !== undefined) return { component: c.name, reason };
    }
    return undefined;
  }

  /**
   * Stops every component in reverse order, within `timeoutMs` when given. A component whose
   * stop fails is logged and the rest still stop; the first failure is the outcome. Calling
   * it again waits for the same stop.
   */
  stop(timeoutMs?: number): Promise<StopOutcome> {
    this.#stopping ??= timeoutMs === undefined ? this.#stopAll() : this.#bounded(timeoutMs);
    return this.#stopping;
  }

  async #bounded(timeoutMs: number): Promise<StopOutcome> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<StopOutcome>((resolve) => {
      timer = setTimeout(() => resolve({ outcome: 'timeout', timeoutMs }), timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([this.#stopAll(), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #stopAll(how: 'stop' | 'abort' = 'stop'): Promise<StopOutcome> {
    clearInterval(this.#poll);
    let failure: Error | undefined;
    for (const layer of [...this.layers].reverse()) {
      const results = await Promise.allSettled(layer.map((c) => (how === 'abort' && c.abort !== undefined ? c.abort() : c.stop())));
      for (const [i, r] of results.entries()) {
        if (r.status === 'fulfilled') continue;
        const err = r.reason as unknown;
        this.#logger.error({ component: layer[i]!.name, err }, `${layer[i]!.name} failed to stop`);
        failure ??= err instanceof Error ? err : new Error(String(err));
      }
    }
    return failure === undefined ? { outcome: 'stopped' } : { outcome: 'failed', error: failure };
  }
}
