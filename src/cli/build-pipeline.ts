import { join } from 'node:path';
import { createAnalyzer } from '../analyze.ts';
import type { Config } from '../config/schema.ts';
import { deriveProvenance } from '../findings/provenance/derive.ts';
import { DecisionPoints } from '../judge/decision-points.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { KeyBy } from '../assemble/assembler.ts';
import { type Clock, Pipeline } from '../pipeline.ts';
import type { FindingSink } from '../sinks/finding-sink.ts';
import { JsonlLog } from '../sinks/jsonl-log.ts';
import { KafkaFindingSink } from '../sinks/kafka/kafka-finding-sink.ts';
import { LocalLogSink } from '../sinks/local-log-sink.ts';
import type { LocalLogsRetention } from '../sinks/log-retention-config.ts';

/** Where a pipeline writes: `serve` uses the data directory, `replay` the files it is given. */
export interface Outputs {
  clock: Clock;
  trajectoriesPath?: string;
  findings?: { findingsPath: string; alarmsPath?: string; truncate: boolean };
  /** Deliver findings to Kafka when `config.kafka` is set (serve only). */
  kafka: boolean;
  /** Rotate and bound the local logs (serve); without it they are kept whole (replay's outputs). */
  retention?: LocalLogsRetention;
  /** `trace` when the Kafka source feeds the pipeline (each partition's owner sees whole traces only). */
  keyBy?: KeyBy;
}

export interface Running {
  pipeline: Pipeline;
  sinks: FindingSink[];
  trajectoryLog: JsonlLog | undefined;
  decisions: DecisionPoints;
  /** Closes the judge, the sinks and the logs (after `pipeline.drain`). */
  close(): Promise<void>;
}

/**
 * Builds the pipeline with its sinks, judge and metrics from a validated configuration.
 * Both `serve` and `replay` use it, so the two run the same analysis.
 */
export async function buildPipeline(config: Config, outputs: Outputs, metrics?: () => Metrics | undefined): Promise<Running> {
  const trajectoryLog =
    outputs.trajectoriesPath === undefined
      ? undefined
      : await JsonlLog.open(outputs.trajectoriesPath, { truncate: outputs.clock === 'event', retention: outputs.retention?.trajectories });
  const sinks: FindingSink[] = [];
  if (outputs.findings !== undefined) {
    const { findingsPath, alarmsPath, truncate } = outputs.findings;
    const { findings, alarms } = outputs.retention ?? {};
    sinks.push(await LocalLogSink.openFiles(findingsPath, alarmsPath, config.sinks.maxPendingBytes, { truncate, findings, alarms }));
  }
  if (outputs.kafka && config.kafka !== undefined) {
    sinks.push(
      await KafkaFindingSink.open(config.kafka, {
        outboxDir: join(config.dataDir, 'outbox', 'kafka'),
        onProduce: (seconds, records) => metrics?.()?.observeKafkaProduce(seconds, records),
      }),
    );
  }
  let pipeline: Pipeline | undefined;
  const decisions = await DecisionPoints.open(config.dataDir, config.judge, {
    onFindings: (findings, alarms) => pipeline?.emitJudged(findings, alarms),
    onCall: (call) => metrics?.()?.observeJudgeCall(call),
    checks: config.checks,
    provenance: (t) => deriveProvenance(t, config.provenance),
  });
  pipeline = new Pipeline({
    limits: config.assembler,
    clock: outputs.clock,
    keyBy: outputs.keyBy ?? 'session',
    analyze: createAnalyzer(config, (issue) => metrics?.()?.provenanceIssues.inc({ reason: issue.reason })),
    provenance: (t) => deriveProvenance(t, config.provenance),
    decisions,
    ...(trajectoryLog === undefined ? {} : { trajectoryLog }),
    maxPendingTrajectoryBytes: config.sinks.maxPendingBytes,
    trajectoryLlmInput: config.sinks.trajectoryLlmInput,
    sinks,
    onTrajectory: (t, analysis) => metrics?.()?.observeTrajectory(t, analysis.findings),
    onManifest: (manifest) => metrics?.()?.observeManifest(manifest),
    onDurable: (sink, seconds) => metrics?.()?.findingDurable.observe({ sink }, seconds),
  });
  return {
    pipeline,
    sinks,
    trajectoryLog,
    decisions,
    close: async () => {
      await decisions.close();
      await Promise.all([trajectoryLog?.close(), ...sinks.map((s) => s.close())]);
    },
  };
}
