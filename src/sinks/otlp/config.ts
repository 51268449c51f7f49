import { z } from 'zod';
import { parseSection } from '../../config/parse-section.ts';
import { AUDIENCES } from '../../findings/audience.ts';
import { DEFAULT_OUTBOX_LIMITS } from '../kafka/outbox.ts';

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
    /** Log records per export request. */
    batchSize: z.number().int().min(1).max(10_000).default(512),
    maxBatchBytes: z.number().int().min(1024).default(1024 * 1024),
    /** Outbox bounds: at either, `backpressure()` says so and input is refused upstream. */
    maxOutboxBytes: z.number().int().min(1024).default(DEFAULT_OUTBOX_LIMITS.maxOutboxBytes),
    maxOutboxRecords: z.number().int().min(1).default(DEFAULT_OUTBOX_LIMITS.maxOutboxRecords),
    maxRecordBytes: z.number().int().min(256).default(DEFAULT_OUTBOX_LIMITS.maxRecordBytes),
    outboxSegmentBytes: z.number().int().min(4096).default(DEFAULT_OUTBOX_LIMITS.segmentBytes),
    /** Backoff after a failed export: doubles from initial up to max. */
    retryInitialMs: z.number().int().min(1).default(250),
    retryMaxMs: z.number().int().min(1).default(10_000),
    /** How long `close()` keeps exporting; what is left stays in the outbox for the next run. */
    closeTimeoutMs: z.number().int().min(0).default(10_000),
  })
  .strict()
  .refine((c) => c.retryInitialMs <= c.retryMaxMs, { message: 'retryInitialMs must not exceed retryMaxMs', path: ['retryInitialMs'] });

export type OtlpEvaluationConfig = z.infer<typeof OtlpEvaluationConfigSchema>;

/** @throws ConfigError naming each bad key and value. */
export function parseOtlpEvaluationConfig(input: unknown, source = 'otlp evaluation events configuration'): OtlpEvaluationConfig {
  return parseSection(OtlpEvaluationConfigSchema, input, source);
}
