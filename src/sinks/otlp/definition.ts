import type { SinkDefinition } from '../sink-definition.ts';
import { OtlpEvaluationConfigSchema } from './config.ts';
import { OtlpEvaluationSink } from './evaluation-sink.ts';

/** Findings as OTLP `gen_ai.evaluation.result` log records, through an outbox (`sinks.otlpEvaluations`). */
export const otlpEvaluationSinkDefinition = {
  key: 'otlpEvaluations',
  name: 'otlp-evaluations',
  schema: OtlpEvaluationConfigSchema,
  external: (config) => config.audience === 'external',
  open: async (config, ctx) => ({
    sink: await OtlpEvaluationSink.open(config, { outboxDir: ctx.outboxDir, log: ctx.log, metrics: ctx.metrics, refusals: ctx.refusals }),
    backlogLimit: { records: config.maxOutboxRecords, bytes: config.maxOutboxBytes },
  }),
} as const satisfies SinkDefinition<'otlpEvaluations', typeof OtlpEvaluationConfigSchema>;
