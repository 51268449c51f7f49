/**
 * One part of a running trajwatch — a source, a stage, a sink, the judge, the metrics endpoint —
 * as the topology sees it (the Collector's `component.Component`). Built (resources opened,
 * configuration already validated) before anything starts; then:
 * - `start` begins its work (listen, consume, tick, replay). It runs once, after every
 *   component it depends on has started. A rejection stops the whole topology.
 * - `stop` ends its work and releases what it holds. It is safe without `start` and safe to
 *   call twice; background work (timers, loops, calls in flight) is cancelled or finished
 *   before it resolves, so a stopped component touches nothing any more.
 * - `health` says, without I/O, why the component cannot do its work now (a full outbox, an
 *   unwritable log: one of `REFUSAL`, `ingest/refusal.ts`), or `undefined`. The topology logs
 *   the first unhealthy reading and the recovery (`FaultLog`); the pipeline's admission asks
 *   the output components, so the reason is what the receivers refuse input with; `/healthz`
 *   names it (503).
 * - `degraded`, when it has one, says why it works worse now without refusing anything (the
 *   judge's calls failing); `/healthz` names it and says `degraded` (200).
 */
export interface Component {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  health(): string | undefined;
  /** Why it works worse now while input is still taken, or `undefined`; without I/O. */
  degraded?(): string | undefined;
  /**
   * Stops without finishing work, when the topology failed to start: nothing is flushed in the
   * name of a run that never was (the pipeline does not drain; what the WAL replayed stays in
   * it for the next start). Without it, `stop` is used.
   */
  abort?(): Promise<void>;
  /** What it holds that is not yet durable or acknowledged (`trajwatch_sink_backlog_*{sink}`). */
  backlog?(): { records?: number; bytes: number };
  /**
   * The backlog at which it refuses new input (`trajwatch_sink_backlog_limit_*{sink}`), so an
   * alert can see it filling before the refusals begin. Absent when it has no such bound.
   */
  readonly backlogLimit?: { records?: number; bytes: number };
}

/** Runs `stop` at most once, and only its first call's work; later calls wait for the same end. */
export function once(stop: () => Promise<void>): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => (stopping ??= stop());
}
