import type { Analysis } from '../analyze.ts';
import type { KeyBy } from '../assemble/assembler.ts';
import type { AssemblerLimits } from '../assemble/limits.ts';
import type { RevisionMemory } from '../assemble/revision-memory.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import type { DerivedProvenance } from '../findings/provenance/derive.ts';
import type { Finding } from '../findings/schema.ts';
import type { FindingSink } from '../sinks/finding-sink.ts';
import type { JsonlLog } from '../sinks/jsonl-log.ts';
import type { Decisions } from './decisions.ts';
import type { TrajectoryForward } from './forwarding.ts';
import type { HealthReporter } from '../ingest/refusal.ts';

/**
 * Whose time closes trajectories: `arrival` (serve: the wall clock when spans arrive) or
 * `event` (replay: the spans' own end times, so a replay is the same on any machine).
 */
export type Clock = 'arrival' | 'event';

export interface PipelineOptions {
  limits: AssemblerLimits;
  clock: Clock;
  /** Checks and findings for one closed trajectory: a pure function. */
  analyze: (t: Trajectory) => Analysis;
  /**
   * A trajectory's provenance, for the manifest of one whose only findings are judged (the
   * inline analysis derives it only when it makes findings). Without it the manifest says
   * `not-derived`.
   */
  provenance?: (t: Trajectory) => DerivedProvenance;
  /** Judged decision points, told of every closed trajectory after the inline analysis. */
  decisions?: Decisions;
  trajectoryLog?: JsonlLog;
  /** Write llm steps' prompt messages into the trajectory log (see `trajectoryToJson`). */
  trajectoryLlmInput?: boolean;
  /** Bytes of trajectory lines not yet durable above which new input is refused. */
  maxPendingTrajectoryBytes?: number;
  sinks: FindingSink[];
  /** Told of every closed trajectory and its inline analysis (metrics, tests). */
  onTrajectory?: (t: Trajectory, analysis: Analysis) => void;
  /** Told of every analysis manifest as it is written (metrics). */
  onManifest?: (manifest: AnalysisManifest) => void;
  /**
   * Told how long a closed trajectory's findings took to become durable (local log) or
   * acknowledged (Kafka), per sink. Sampled: one timing per sink is in flight at a time.
   */
  onDurable?: (sink: string, seconds: number) => void;
  /** Told of judged findings and the coordinator alarms among them as they are emitted (metrics). */
  onJudged?: (findings: readonly Finding[], alarms: readonly Finding[]) => void;
  /** `trace` when a partitioned source (Kafka) feeds it: see {@link KeyBy}. Default `session`. */
  keyBy?: KeyBy;
  /** Told of each closed revision, so the memory of them outlives the process (`sinks/revision-memory-sink.ts`). */
  revisionMemory?: RevisionMemory;
  /**
   * Stage 1 of a repartition (`repartition/`): a closed trajectory it takes is sent on to be
   * analyzed elsewhere (with its session) instead of here; its source positions stay held
   * until the forward is acknowledged.
   */
  forward?: TrajectoryForward;
  /**
   * What `admission()` asks first, in order: the outputs as the topology runs them (its output
   * components: the trajectory log, the sinks, the audience quarantine, the revision memory), so
   * input is refused for exactly the reasons `/healthz` shows. Absent (tests, library use): the
   * trajectory log and each sink's backpressure. Then the forward's, then the assembler's bounds.
   */
  downstream?: readonly HealthReporter[];
}
