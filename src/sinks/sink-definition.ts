import type { z } from 'zod';
import type { LevelLog } from '../telemetry/logger.ts';
import type { MetricRegistry } from '../telemetry/metrics.ts';
import type { AudienceRefusals } from './audience-refusals.ts';
import type { FindingSink } from './finding-sink.ts';

/** What a sink is given when it is opened: its outbox directory, its logger, the registry, the quarantine. */
export interface SinkContext {
  /** `<dataDir>/outbox/<name>`: where a sink that keeps an outbox keeps it. */
  outboxDir: string;
  /** The `sinks.<name>` logger. */
  log: LevelLog;
  /** Where it declares its series; undefined: none. */
  metrics: MetricRegistry | undefined;
  /** The process's refusals of external views (a refused record is kept whole there, counted). */
  refusals: AudienceRefusals;
}

/** An opened sink, and where its backpressure begins when it has one bound (an outbox). */
export interface OpenedSink {
  sink: FindingSink;
  backlogLimit?: { records: number; bytes: number };
}

/**
 * Everything the topology needs to know of a configured sink, kept beside the sink and
 * registered once in `SINKS` (`registry.ts`): its section under `sinks.<key>` in the
 * configuration (absent: the sink is off), whether it carries an external view, how to open it.
 *
 * @example
 * export const memorySinkDefinition = {
 *   key: 'memory', name: 'memory', schema: z.strictObject({}),
 *   external: () => false,
 *   open: async () => ({ sink: new MemorySink() }),
 * } as const satisfies SinkDefinition<'memory', z.ZodType>;
 */
export interface SinkDefinition<K extends string = string, S extends z.ZodType = z.ZodType> {
  /** Its section: `sinks.<key>`. */
  readonly key: K;
  /** Its component and logger name (`sinks.<name>`) and its outbox directory (`outbox/<name>`). */
  readonly name: string;
  readonly schema: S;
  // Methods, not function properties: a list of definitions of different sections is a list of `SinkDefinition`.
  /** Whether any stream it carries is the external view (the quarantine log is opened then). */
  external(config: z.infer<S>): boolean;
  /** Opens it: writing from now, delivering in the background; a failure here stops the build. */
  open(config: z.infer<S>, ctx: SinkContext): Promise<OpenedSink>;
}
