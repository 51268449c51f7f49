import type { z } from 'zod';
import { kafkaSinkDefinition } from './kafka/definition.ts';
import { otlpEvaluationSinkDefinition } from './otlp/definition.ts';
import type { SinkDefinition } from './sink-definition.ts';

/**
 * Every configured sink, one line each: its section `sinks.<key>` is composed into the
 * configuration from here, and the topology opens, in this order, each one configured. The
 * local logs are not here: `serve` and `replay` always write them, to paths they choose.
 */
export const SINKS = [kafkaSinkDefinition, otlpEvaluationSinkDefinition] as const;

/** The sections of `sinks`, each optional (absent: that sink is off), keyed as the definitions say. */
export type SinkSections<D extends readonly SinkDefinition[]> = { [E in D[number] as E['key']]: z.ZodOptional<E['schema']> };

/** The `sinks.<key>` sections of `definitions`, for the `sinks` object of the configuration schema. */
export function sinkSections<const D extends readonly SinkDefinition[]>(definitions: D): SinkSections<D> {
  return Object.fromEntries(definitions.map((d) => [d.key, d.schema.optional()])) as SinkSections<D>;
}
