import { anyExternal, withAudience } from '../audience-sink.ts';
import type { SinkDefinition } from '../sink-definition.ts';
import { KafkaSinkConfigSchema } from './config.ts';
import { KafkaFindingSink } from './kafka-finding-sink.ts';

/** Findings and alarms to Kafka topics, through an outbox (`sinks.kafka`). */
export const kafkaSinkDefinition = {
  key: 'kafka',
  name: 'kafka',
  schema: KafkaSinkConfigSchema,
  external: (config) => anyExternal(config.audience),
  open: async (config, ctx) => {
    const kafka = await KafkaFindingSink.open(config, { outboxDir: ctx.outboxDir, log: ctx.log, metrics: ctx.metrics });
    return {
      sink: withAudience(kafka, config.audience, ctx.refusals),
      backlogLimit: { records: config.maxOutboxRecords, bytes: config.maxOutboxBytes },
    };
  },
} as const satisfies SinkDefinition<'kafka', typeof KafkaSinkConfigSchema>;
