/**
 * The one vocabulary of refusals: every reason a part of trajwatch cannot take input now. A
 * component's `health()` names one; admission (`PipelineInput.admission`) answers with it; the
 * receivers refuse with it (HTTP 503, gRPC RESOURCE_EXHAUSTED or UNAVAILABLE, a paused Kafka
 * consumer: `export-status.ts`); `trajwatch_otlp_requests_refused_total{reason}`, the fault log
 * and `/healthz` show it. Spelled here only, so a dashboard, an alert rule or a runbook can name
 * each one.
 */
export const REFUSAL = {
  // The memory bounds: RESOURCE_EXHAUSTED over gRPC.
  /** `assembler.maxOpenTrajectories`. */
  maxOpenTrajectories: 'max-open-trajectories',
  /** `assembler.maxBufferedBytes`. */
  maxBufferedBytes: 'max-buffered-bytes',
  /** `receiver.maxInflightBytes`: request bodies in flight, both receivers. */
  maxInflightBytes: 'max-inflight-bytes',

  // An output behind or failing: UNAVAILABLE over gRPC.
  trajectoryLogUnwritable: 'trajectory-log-unwritable',
  /** More than `sinks.maxPendingBytes` waiting to be written. */
  trajectoryLogBacklog: 'trajectory-log-backlog',
  findingsLogClosed: 'findings-log-closed',
  findingsLogUnwritable: 'findings-log-unwritable',
  findingsLogBacklog: 'findings-log-backlog',
  kafkaSinkClosed: 'kafka-sink-closed',
  kafkaOutboxUnwritable: 'kafka-outbox-unwritable',
  /** The outbox at `kafka.maxOutboxRecords`/`maxOutboxBytes`: the broker is down, or behind, past the bound. */
  kafkaOutboxFull: 'kafka-outbox-full',
  otlpEvaluationsClosed: 'otlp-evaluations-closed',
  otlpOutboxUnwritable: 'otlp-outbox-unwritable',
  otlpOutboxFull: 'otlp-outbox-full',
  revisionMemoryClosed: 'revision-memory-closed',
  revisionMemoryUnwritable: 'revision-memory-unwritable',
  /** Stage 1 of the repartition: `maxInFlightBytes` forwarded and not yet acknowledged. */
  repartitionInFlight: 'repartition-in-flight',
  /** The span WAL at `receiver.wal.maxBytes`. */
  walFull: 'wal-full',
  walUnwritable: 'wal-unwritable',
  /** The quarantine of refused external views cannot write: what it would hold is kept nowhere else. */
  audienceQuarantineUnwritable: 'audience-quarantine-unwritable',
  /** The Kafka source's consumer, paused while the pipeline refuses input. */
  consumerPaused: 'paused',
} as const;

export type Refusal = (typeof REFUSAL)[keyof typeof REFUSAL];

/** A part that can say, without I/O, why it cannot take input now (a topology component, a sink). */
export interface HealthReporter {
  /** A {@link REFUSAL} reason, or undefined. */
  health(): string | undefined;
}

/**
 * Refusals for a memory bound of the pipeline: answered RESOURCE_EXHAUSTED over gRPC, where
 * every other refusal (a sink or log behind or failing) is UNAVAILABLE. Both are 503 over HTTP.
 */
export type AdmissionRefusal = typeof REFUSAL.maxOpenTrajectories | typeof REFUSAL.maxBufferedBytes | typeof REFUSAL.maxInflightBytes;

/** The {@link AdmissionRefusal}s, for the status map. */
export const MEMORY_BOUND_REFUSALS: ReadonlySet<string> = new Set<AdmissionRefusal>([
  REFUSAL.maxOpenTrajectories,
  REFUSAL.maxBufferedBytes,
  REFUSAL.maxInflightBytes,
]);
