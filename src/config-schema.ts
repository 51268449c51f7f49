import { z } from 'zod';
import { parseSection } from './config/parse-section.ts';
import type { RawConfig } from './config/load.ts';
import { AssemblerLimitsSchema } from './assemble/limits.ts';
import { RevisionMemoryConfigSchema } from './assemble/revision-log-config.ts';
import { checksConfigSchema } from './checks/config.ts';
import { ProvenanceConfigSchema } from './findings/provenance/config.ts';
import { JudgeConfigSchema } from './judge/config.ts';
import { KafkaSinkConfigSchema } from './sinks/kafka/config.ts';
import { LocalLogsRetentionSchema } from './sinks/log-retention-config.ts';
import { OtlpEvaluationConfigSchema } from './sinks/otlp/config.ts';
import { ReceiverConfigSchema } from './ingest/otlp/receiver-config.ts';
import { SourceConfigSchema } from './ingest/kafka/config.ts';
import { StreamAudiencesSchema } from './sinks/audience-sink.ts';
import { LogConfigSchema } from './telemetry/logger.ts';

/**
 * The whole configuration: strict (unknown keys are errors), every default embedded. The
 * composition root of configuration: it imports each component's section, so it sits above
 * every stage (docs/architecture.md); the sections themselves use only `config/` helpers.
 */
export const ConfigSchema = z
  .object({
    /** Where trajectories, findings and durable state are written. */
    dataDir: z.string().min(1).default('./data'),
    /** `serve`'s bound on a SIGTERM/SIGINT stop; past it the process exits 1 (the WAL still holds what was acknowledged). */
    shutdownTimeoutMs: z.number().int().min(100).default(10_000),
    receiver: ReceiverConfigSchema.prefault({}),
    /** Where spans come from: the OTLP receivers (default) and/or a Kafka topic (docs/scaling-out.md). */
    source: SourceConfigSchema.prefault({}),
    assembler: AssemblerLimitsSchema.prefault({}),
    /** The closed-revision memory on disk (`<dataDir>/revisions`, serve), so a restart remembers which revisions closed. */
    revisionMemory: RevisionMemoryConfigSchema.prefault({}),
    /** Tool classes and rules of the L0 checks (docs/checks.md). */
    checks: checksConfigSchema.prefault({}),
    /** Treatment bundles and conditions readings attached to every finding. */
    provenance: ProvenanceConfigSchema.prefault({}),
    /** Judged decision points (windows, judge client, policy, certificates); off by default. */
    judge: JudgeConfigSchema.prefault({}),
    /** Findings and alarms to Kafka; absent, findings go to the local log only. */
    kafka: KafkaSinkConfigSchema.optional(),
    /** Findings also as OTLP `gen_ai.evaluation.result` log records; absent (default), none (docs/consumers.md). */
    otlpEvaluations: OtlpEvaluationConfigSchema.optional(),
    /** The process's log: JSON lines on stdout at `level` and above (env `TRAJWATCH_LOG_LEVEL`). */
    log: LogConfigSchema.prefault({}),
    sinks: z
      .object({
        /** Bytes written to a local log but not yet durable above which new input is refused. */
        maxPendingBytes: z.number().int().min(1).default(64 * 1024 * 1024),
        /** Write llm steps' prompt messages (`input`) into trajectories.jsonl too (large). */
        trajectoryLlmInput: z.boolean().default(false),
        /** How much of trajectories.jsonl, findings.jsonl and alarms.jsonl `serve` keeps (docs/operations.md). */
        retention: LocalLogsRetentionSchema.prefault({}),
        /** The local logs (findings.jsonl, alarms.jsonl): the view each carries (docs/consumers.md "Audience"). */
        localLog: z.strictObject({ audience: StreamAudiencesSchema }).prefault({}),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;

/** Validates everything at once; throws a ConfigError listing every problem with key and value. */
export function validateConfig(raw: RawConfig): Config {
  return parseSection(ConfigSchema, raw.value, raw.source, raw.locate);
}
