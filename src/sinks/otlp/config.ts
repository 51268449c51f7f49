import { z } from 'zod';
import { parseSection } from '../../config/parse-section.ts';
import { AUDIENCES } from '../../findings/audience.ts';
import { batchKeys, OUTBOX_DELIVERY_KEYS, retryOrder } from '../delivery/config.ts';

/**
 * OpenTelemetry evaluation events (docs/consumers.md): every finding also as an OTLP/HTTP log
 * record of the GenAI `gen_ai.evaluation.result` event. Off unless configured. Strict.
 */
export const OtlpEvaluationConfigSchema = z
  .object({
    /** The OTLP/HTTP logs endpoint (a Collector's `otlp` receiver: `http://host:4318/v1/logs`). */
    endpoint: z.url().default('http://127.0.0.1:4318/v1/logs'),
    headers: z.record(z.string(), z.string()).default({}),
    /** The view the event bodies carry (attributes carry no internal field in either). */
    audience: z.enum(AUDIENCES).default('internal'),
    /** `service.name` of the exporting resource. */
    serviceName: z.string().min(1).default('trajwatch'),
    /** Per export request, including the exporter's own retries. */
    timeoutMs: z.number().int().min(100).default(10_000),
    /** Log records per export request, and its bytes beyond the first record. */
    ...batchKeys(512, 1024 * 1024),
    ...OUTBOX_DELIVERY_KEYS,
  })
  .strict()
  .refine(...retryOrder);

export type OtlpEvaluationConfig = z.infer<typeof OtlpEvaluationConfigSchema>;

/** @throws ConfigError naming each bad key and value. */
export function parseOtlpEvaluationConfig(input: unknown, source = 'otlp evaluation events configuration'): OtlpEvaluationConfig {
  return parseSection(OtlpEvaluationConfigSchema, input, source);
}
