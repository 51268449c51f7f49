import type { Analysis } from '../analyze.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import { trajectoryToJson } from '../assemble/trajectory-json.ts';
import { buildManifest } from '../findings/manifest.ts';
import type { Finding } from '../findings/schema.ts';
import type { JudgedPart } from '../judge/consideration.ts';
import type { FindingSink } from '../sinks/finding-sink.ts';
import type { PipelineCounts } from './counts.ts';
import type { PipelineOptions } from './options.ts';
import type { HealthReporter } from '../ingest/refusal.ts';
import { logRefusal, TRAJECTORY_LOG_REFUSALS } from '../sinks/log-refusal.ts';

/** What the outputs read of the pipeline's options. */
export type OutputOptions = Pick<
  PipelineOptions,
  'sinks' | 'downstream' | 'trajectoryLog' | 'trajectoryLlmInput' | 'maxPendingTrajectoryBytes' | 'provenance' | 'onManifest' | 'onDurable' | 'onJudged'
>;

/**
 * Where the pipeline's output goes: the trajectory log, and findings, alarms and analysis
 * manifests fanned out to every sink in order; whether they can take more (admission), when
 * what was written is durable (`flushed`), and how long that took per sink (`onDurable`).
 */
export class PipelineOutputs {
  readonly #options: OutputOptions;
  readonly #counts: PipelineCounts;
  /** Sinks with a durability timing in flight. */
  readonly #timing = new Set<FindingSink>();
  readonly #downstream: readonly HealthReporter[];

  /** `counts`: the pipeline's, where findings and manifests written are counted. */
  constructor(options: OutputOptions, counts: PipelineCounts) {
    this.#options = options;
    this.#counts = counts;
    this.#downstream = options.downstream ?? ownOutputs(options);
  }

  /**
   * A reason to refuse input because an output is failing or behind, or undefined: each of
   * `downstream` asked in order (the topology's output components), else the trajectory log
   * and each sink's backpressure.
   */
  admission(): string | undefined {
    for (const part of this.#downstream) {
      const reason = part.health();
      if (reason !== undefined) return reason;
    }
    return undefined;
  }

  /** The closed trajectory's line in the trajectory log (when there is one). */
  writeTrajectory(t: Trajectory): void {
    this.#options.trajectoryLog?.append([JSON.stringify(trajectoryToJson(t, { llmInput: this.#options.trajectoryLlmInput ?? false }))]);
  }

  /** Inline findings go to every sink. */
  writeFindings(findings: readonly Finding[]): void {
    this.#counts.findingsEmitted += findings.length;
    if (findings.length > 0) for (const sink of this.#options.sinks) sink.write(findings, 'findings');
  }

  /** Judged findings, and the coordinator alarms among them, go to every sink. */
  emitJudged(findings: readonly Finding[], alarms: readonly Finding[]): void {
    this.#counts.findingsEmitted += findings.length;
    this.#options.onJudged?.(findings, alarms);
    for (const sink of this.#options.sinks) {
      if (findings.length > 0) sink.write(findings, 'findings');
      if (alarms.length > 0) sink.write(alarms, 'alarms');
    }
  }

  /** Writes the revision's analysis manifest to every sink (the findings stream). */
  writeManifest(t: Trajectory, analysis: Analysis, judged: JudgedPart): void {
    const judgedFindings = judged.windows.some((w) => w.finding_ids.length > 0);
    const provenance = analysis.provenance ?? (judgedFindings ? this.#options.provenance?.(t) : undefined);
    const manifest = buildManifest({
      trajectory: t,
      checks: analysis.checks,
      findings: analysis.findings,
      provenance,
      judge: judged.judge,
      windows: judged.windows,
    });
    this.#counts.manifestsEmitted++;
    for (const sink of this.#options.sinks) sink.writeManifest?.(manifest);
    this.#options.onManifest?.(manifest);
    this.#timeDurability();
  }

  /** Resolves once everything written so far is durable (the trajectory log, then every sink). */
  async flushed(): Promise<void> {
    await this.#options.trajectoryLog?.flushed();
    await Promise.all(this.#options.sinks.map((s) => s.flushed()));
  }

  #timeDurability(): void {
    const observe = this.#options.onDurable;
    if (observe === undefined) return;
    const startedAt = performance.now();
    for (const sink of this.#options.sinks) {
      if (this.#timing.has(sink)) continue;
      this.#timing.add(sink);
      sink.flushed().then(
        () => {
          this.#timing.delete(sink);
          observe(sink.name, (performance.now() - startedAt) / 1000);
        },
        () => this.#timing.delete(sink),
      );
    }
  }
}

/** What a pipeline built without the topology refuses for: its trajectory log, then its sinks. */
function ownOutputs(options: OutputOptions): HealthReporter[] {
  const { trajectoryLog: log, maxPendingTrajectoryBytes = Infinity } = options;
  return [
    ...(log === undefined ? [] : [{ health: () => logRefusal(log, maxPendingTrajectoryBytes, TRAJECTORY_LOG_REFUSALS) }]),
    ...options.sinks.map((sink) => ({ health: () => sink.backpressure() })),
  ];
}
