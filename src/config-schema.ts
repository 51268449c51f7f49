import { z } from 'zod';
import { applyKeyAliases, type KeyAlias, warnOnStderr } from './config/deprecated.ts';
import { parseSection } from './config/parse-section.ts';
import type { RawConfig } from './config/load.ts';
import { AssemblerLimitsSchema } from './assemble/limits.ts';
import { RevisionMemoryConfigSchema } from './assemble/revision-log-config.ts';
import { checksConfigSchema } from './checks/config.ts';
import { ProvenanceConfigSchema } from './findings/provenance/config.ts';
import { JudgeConfigSchema } from './judge/config.ts';
import { LocalLogsRetentionSchema } from './sinks/log-retention-config.ts';
import { ReceiverConfigSchema } from './ingest/otlp/receiver-config.ts';
import { SourceConfigSchema } from './ingest/kafka/config.ts';
import { StreamAudiencesSchema } from './sinks/audience-sink.ts';
import { SINKS, sinkSections } from './sinks/registry.ts';
import type { SinkDefinition } from './sinks/sink-definition.ts';
import { LogConfigSchema } from './telemetry/logger.ts';

/**
 * The whole configuration with the sections of `sinks` (`SINKS`, or a test's list): strict
 * (unknown keys are errors), every default embedded. The composition root of configuration: it
 * imports each component's section, so it sits above every stage (docs/architecture.md); the
 * sections themselves use only `config/` helpers.
 */
export function configSchema<const D extends readonly SinkDefinition[]>(sinks: D) {
  return z
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
      /** The process's log: JSON lines on stdout at `level` and above (env `TRAJWATCH_LOG_LEVEL`). */
      log: LogConfigSchema.prefault({}),
      sinks: z
        .object({
          /** Bytes written to a local log but not yet durable above which new input is refused. */
          maxPendingBytes: z
            .number()
            .int()
            .min(1)
            .default(64 * 1024 * 1024),
          /** Write llm steps' prompt messages (`input`) into trajectories.jsonl too (large). */
          trajectoryLlmInput: z.boolean().default(false),
          /** How much of trajectories.jsonl, findings.jsonl and alarms.jsonl `serve` keeps (docs/operations.md). */
          retention: LocalLogsRetentionSchema.prefault({}),
          /** The local logs (findings.jsonl, alarms.jsonl): the view each carries (docs/consumers.md "Audience"). */
          localLog: z.strictObject({ audience: StreamAudiencesSchema }).prefault({}),
          /**
           * Each configured sink's section (absent: off): `kafka`, findings and alarms to Kafka;
           * `otlpEvaluations`, findings as OTLP `gen_ai.evaluation.result` log records (docs/consumers.md).
           */
          ...sinkSections(sinks),
        })
        .strict()
        // Every key has a default or is optional; the generic sections hide that from the type.
        .prefault({} as never),
    })
    .strict();
}

/** The configuration of this build: every registered sink's section. */
export const ConfigSchema = configSchema(SINKS);

export type Config = z.infer<typeof ConfigSchema>;

/** Sections that moved under `sinks`, still read at their old top-level keys (with a warning). */
export const CONFIG_KEY_ALIASES: readonly KeyAlias[] = [
  { from: ['kafka'], to: ['sinks', 'kafka'] },
  { from: ['otlpEvaluations'], to: ['sinks', 'otlpEvaluations'] },
];

/**
 * Validates everything at once; throws a ConfigError listing every problem with key and value.
 * An old key (`CONFIG_KEY_ALIASES`) is read at its new place, and `onDeprecated` told once.
 */
export function validateConfig(raw: RawConfig, onDeprecated: (note: string) => void = warnOnStderr): Config {
  const aliased = applyKeyAliases(raw, CONFIG_KEY_ALIASES, onDeprecated);
  return parseSection(ConfigSchema, aliased.value, aliased.source, aliased.locate);
}
