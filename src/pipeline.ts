import type { Analysis } from './analyze.ts';
import { Assembler, type KeyBy } from './assemble/assembler.ts';
import type { AssemblerLimits } from './assemble/limits.ts';
import { refuseDemand } from './assemble/request-admission.ts';
import type { RevisionMemory } from './assemble/revision-memory.ts';
import type { CaptureConflict, IncompleteReason, Trajectory } from './assemble/trajectory.ts';
import { trajectoryToJson } from './assemble/trajectory-json.ts';
import { buildManifest } from './findings/manifest.ts';
import type { AnalysisManifest } from './findings/manifest-schema.ts';
import type { DerivedProvenance } from './findings/provenance/derive.ts';
import type { Finding } from './findings/schema.ts';
import { foldFloor, type LogsAccepted, type PipelineInput, type PositionFloor, type RequestDemand, type SourcePosition } from './ingest/pipeline-input.ts';
import type { DecodedLogsRequest } from './ingest/log-record.ts';
import { demandOf } from './ingest/request-demand.ts';
import type { DecodedRequest } from './ingest/span.ts';
import { isContentEventName, logEventName } from './normalize/content-events.ts';
import { normalizeSpan } from './normalize/normalize.ts';
import type { Step } from './normalize/step.ts';
import type { CheckResults } from './checks/check-result.ts';
import type { FindingSink } from './sinks/finding-sink.ts';
import { JUDGE_DISABLED, type JudgedPart } from './judge/consideration.ts';
import type { JsonlLog } from './sinks/jsonl-log.ts';
import { logRefusal, TRAJECTORY_LOG_REFUSALS } from './sinks/log-refusal.ts';
import type { HealthReporter } from './ingest/refusal.ts';

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

/** Where stage 1 sends a closed trace that names a session (`repartition/forwarder.ts`). */
export interface TrajectoryForward {
  /**
   * Takes `t` (resolves once the broker acknowledged it, never rejects: it retries) or
   * returns undefined, and `t` is analyzed here. `captured`: its steps as captured.
   */
  forward(t: Trajectory, captured: () => Step[]): Promise<void> | undefined;
  /** A reason to refuse input now (in-flight bytes at their bound), or undefined. */
  backpressure(): string | undefined;
}

/** One closed stage-1 trace as stage 2 takes it from the internal topic (`repartition/record.ts`). */
export interface ForwardedTrace {
  sessionId: string;
  traceId: string;
  steps: readonly Step[];
  capture: { incompleteReasons: readonly IncompleteReason[]; conflicts: readonly CaptureConflict[]; refusedSpans: number };
}

/** What the pipeline needs of the judge (`judge/decision-points.ts`). */
export interface Decisions {
  /**
   * Never blocks, never throws: samples windows and queues judge calls within budget. Returns
   * every window's fate — at once when nothing was queued, else a promise (never rejected)
   * that resolves after the queued windows' findings went to `emitJudged` or were deferred.
   */
  consider(t: Trajectory, checks: CheckResults, inlineFindings: readonly Finding[]): JudgedPart | Promise<JudgedPart>;
  /** Waits for the calls in flight (end of a replay: every queued window is judged). */
  drain(): Promise<void>;
  /** Shutdown begins: windows from here on are recorded as deferred, never paid for. */
  beginShutdown(): void;
  /** Shutdown: queued windows are recorded as deferred and calls in flight are cancelled. */
  close(): Promise<void>;
}

export interface PipelineCounts {
  spansAccepted: number;
  spansRejected: number;
  trajectoriesClosed: number;
  /** Closed trajectories sent on to stage 2 (repartition) instead of analyzed here. */
  trajectoriesForwarded: number;
  findingsEmitted: number;
  manifestsEmitted: number;
}

/** Log records the pipeline did not hold for a step, by reason (what it held, the assembler counts). */
export interface LogCounts {
  /** Refused by the decoder (malformed ids), reported in the partial success. */
  refused: number;
  /** Not a GenAI content event (an application log): not analysis input. */
  notContentEvent: number;
  /** A content event without a trace and span id: reported in the partial success. */
  noSpanContext: number;
}

/**
 * Closing (and analyzing) due trajectories in `serve` yields to receiving after this long in
 * one event-loop turn. A time budget, not a count: the closes must keep pace with intake,
 * whatever the trajectories' size, or open work (and the heap) grows under load.
 */
const CLOSE_TURN_MS = 5;

/** Trajectories closed between two looks at the clock. */
const CLOSES_PER_CHECK = 16;

/** How long to wait before asking the sinks again when they failed to make findings durable. */
const SETTLE_RETRY_MS = 1_000;

/**
 * decode → normalize → assemble → checks → findings → sinks, in one event loop.
 *
 * Every closed trajectory revision ends with its analysis manifest on the findings stream
 * (`findings/manifest.ts`): at once when the judge queued nothing for it, else once the judge
 * settled each queued window (findings handed on, or deferred), after those findings.
 *
 * Source positions: a request from a replayable source (a Kafka record, the span WAL) comes
 * with its {@link SourcePosition}. A record is finished once every trajectory it fed is closed
 * and its inline and judged findings, its manifest and its trajectory line are durable in the
 * sinks; {@link committable} says, per partition, up to where every record is finished, which
 * is what the source may commit. So a crash while a judge call is out replays the trajectory,
 * and the ledger turns the intent it finds without a result into an escalation.
 */
export class Pipeline implements PipelineInput {
  readonly assembler: Assembler;
  readonly #options: PipelineOptions;
  readonly #downstream: readonly HealthReporter[];
  #watermarkMs = 0;
  /** partition → the offset after the highest record accepted from it. */
  readonly #nextOffset = new Map<number, number>();
  /** Positions of closed trajectories whose output is not yet known durable, by close sequence. */
  readonly #settling = new Map<number, PositionFloor>();
  /** Positions of closed trajectories whose judged part is not settled yet (held in {@link committable}). */
  readonly #judging = new Set<PositionFloor>();
  /** Judged parts being waited for: {@link settled} and {@link drain} wait for them. */
  readonly #awaitingJudge = new Set<Promise<void>>();
  #settleSeq = 0;
  #settleLoop: Promise<void> | undefined;
  readonly counts: PipelineCounts = { spansAccepted: 0, spansRejected: 0, trajectoriesClosed: 0, trajectoriesForwarded: 0, findingsEmitted: 0, manifestsEmitted: 0 };
  readonly logCounts: LogCounts = { refused: 0, notContentEvent: 0, noSpanContext: 0 };
  /** A burst of closes is being worked through in later turns. */
  #tickPending = false;
  /** Sinks with a durability timing in flight. */
  readonly #timing = new Set<FindingSink>();

  constructor(options: PipelineOptions) {
    this.#options = options;
    const { keyBy = 'session', revisionMemory: memory } = options;
    this.assembler = new Assembler(options.limits, (t, positions, captured) => this.#closed(t, positions, captured), { keyBy, memory });
    this.#downstream = options.downstream ?? ownOutputs(options);
  }

  admission(): string | undefined {
    return this.#outputsAdmission() ?? this.#options.forward?.backpressure() ?? this.assembler.admission();
  }

  #outputsAdmission(): string | undefined {
    for (const part of this.#downstream) {
      const reason = part.health();
      if (reason !== undefined) return reason;
    }
    return undefined;
  }

  /**
   * Stage 2 of a repartition: takes one closed stage-1 trace (its steps, then what its capture
   * lost) into the trajectory of its session. A record that brings no new step (a replayed
   * forward) adds nothing: its capture state was folded in when it first came.
   */
  acceptForwarded(trace: ForwardedTrace, position?: SourcePosition): void {
    const event = this.#options.clock === 'event';
    const now = event ? 0 : Date.now();
    const before = this.assembler.stats().duplicateSpans;
    for (const step of trace.steps) {
      const activity = event ? Number(step.endTimeUnixNano / 1_000_000n) : now;
      if (activity > this.#watermarkMs) this.#watermarkMs = activity;
      this.assembler.add(step, activity, position);
    }
    const allDuplicates = trace.steps.length > 0 && this.assembler.stats().duplicateSpans - before === trace.steps.length;
    if (!allDuplicates) this.assembler.noteForwarded(trace.traceId, trace.sessionId, trace.capture, event ? this.#watermarkMs : now, position);
    this.#noteOffset(position);
    this.counts.spansAccepted += trace.steps.length;
    if (event) this.assembler.advance(this.#watermarkMs);
  }

  /** `admission()`, then whether `request` fits the assembler's bounds beside `reserved` (`assemble/request-admission.ts`). */
  admitRequest(request: DecodedRequest, reserved?: RequestDemand): string | undefined {
    return this.admission() ?? refuseDemand(this.assembler.stats(), this.#options.limits, demandOf(request), reserved);
  }

  /** Takes a decoded request; `position` is where it sits in a replayable source (Kafka record). */
  accept(request: DecodedRequest, position?: SourcePosition): void {
    const event = this.#options.clock === 'event';
    const now = event ? 0 : Date.now();
    for (const span of request.spans) {
      const step = normalizeSpan(span);
      const activity = event ? Number(step.endTimeUnixNano / 1_000_000n) : now;
      if (activity > this.#watermarkMs) this.#watermarkMs = activity;
      this.assembler.add(step, activity, position);
    }
    this.#noteOffset(position);
    this.counts.spansAccepted += request.spans.length;
    this.counts.spansRejected += request.rejected.length;
    const refusedByTrace = new Map<string, number>();
    for (const r of request.rejected) {
      if (r.traceId !== undefined) refusedByTrace.set(r.traceId, (refusedByTrace.get(r.traceId) ?? 0) + 1);
    }
    for (const [traceId, n] of refusedByTrace) {
      this.assembler.noteRefused(traceId, n, event ? this.#watermarkMs : now, position);
    }
    if (event) this.assembler.advance(this.#watermarkMs);
  }

  /**
   * Takes a decoded OTLP logs request. A GenAI content event (by `event_name`, or the older
   * `event.name` attribute) naming a trace and span is held for that span's step
   * (`Assembler.addContentEvent`); one without a span context is counted and reported back;
   * any other record is an application log, counted and not kept.
   */
  acceptLogs(request: DecodedLogsRequest, position?: SourcePosition): LogsAccepted {
    const event = this.#options.clock === 'event';
    const now = event ? 0 : Date.now();
    let unattachable = 0;
    for (const log of request.logs) {
      const name = logEventName(log.eventName, log.attributes);
      if (!isContentEventName(name)) {
        this.logCounts.notContentEvent++;
        continue;
      }
      if (log.traceId === undefined || log.spanId === undefined) {
        unattachable++;
        continue;
      }
      // A record without a time (0) is as recent as the input so far, never at the epoch.
      const activity = event ? (log.timeUnixNano === 0n ? this.#watermarkMs : Number(log.timeUnixNano / 1_000_000n)) : now;
      if (activity > this.#watermarkMs) this.#watermarkMs = activity;
      const held = { name, attributes: log.attributes, timeUnixNano: log.timeUnixNano, ...(log.body === undefined ? {} : { body: log.body }) };
      this.assembler.addContentEvent(log.traceId, log.spanId, held, log.encodedBytes, activity, position);
    }
    this.#noteOffset(position);
    this.logCounts.noSpanContext += unattachable;
    this.logCounts.refused += request.rejected.length;
    if (event) this.assembler.advance(this.#watermarkMs);
    return { unattachable };
  }

  /** Every log-record outcome, pipeline and assembler together, for `trajwatch_logs_total`. */
  logOutcomes(): Record<string, number> {
    const c = this.assembler.stats().contentEvents;
    return {
      refused: this.logCounts.refused,
      'not-content-event': this.logCounts.notContentEvent,
      'no-span-context': this.logCounts.noSpanContext,
      held: c.held,
      duplicate: c.duplicate,
      late: c.late,
      joined: c.joined,
      'no-new-facts': c.noNewFacts,
      'span-missing': c.spanMissing,
    };
  }

  #noteOffset(position: SourcePosition | undefined): void {
    if (position !== undefined && (this.#nextOffset.get(position.partition) ?? -1) <= position.offset) {
      this.#nextOffset.set(position.partition, position.offset + 1);
    }
  }

  /**
   * Closes what is due; `serve` calls it on a timer with the wall clock. A burst of closes is
   * cut into turns of {@link CLOSE_TURN_MS}, so receiving never waits behind all of them.
   */
  tick(nowMs: number = Date.now()): void {
    if (this.#tickPending) return;
    const turnEnds = performance.now() + CLOSE_TURN_MS;
    while (this.assembler.advance(nowMs, CLOSES_PER_CHECK)) {
      if (performance.now() < turnEnds) continue;
      this.#tickPending = true;
      setImmediate(() => {
        this.#tickPending = false;
        this.tick(nowMs);
      });
      return;
    }
  }

  /** Closes what is open (on shutdown only what no source replays: WAL- or Kafka-held is left to it), then waits for the judge and the sinks. */
  async drain(cause: 'end-of-input' | 'shutdown'): Promise<void> {
    // On shutdown nothing new is paid for: the judge defers what is queued, within a bound.
    if (cause === 'shutdown') this.#options.decisions?.beginShutdown();
    this.assembler.flush(cause, this.#options.clock === 'event' ? this.#watermarkMs : Date.now(), cause === 'shutdown');
    if (cause === 'shutdown') await this.#options.decisions?.close();
    else await this.#options.decisions?.drain();
    await this.#judgedParts();
    await this.flushed();
  }

  /** Judged findings, and the coordinator alarms among them, go to every sink. */
  emitJudged(findings: readonly Finding[], alarms: readonly Finding[]): void {
    this.counts.findingsEmitted += findings.length;
    this.#options.onJudged?.(findings, alarms);
    for (const sink of this.#options.sinks) {
      if (findings.length > 0) sink.write(findings, 'findings');
      if (alarms.length > 0) sink.write(alarms, 'alarms');
    }
  }

  async flushed(): Promise<void> {
    await this.#options.trajectoryLog?.flushed();
    await Promise.all(this.#options.sinks.map((s) => s.flushed()));
  }

  /**
   * Per partition seen, the offset a source may commit: the lowest offset still held by an
   * open trajectory or by a closed one whose output is not yet durable, else the offset after
   * the highest record accepted. Every record below it is finished.
   */
  committable(): Map<number, number> {
    const floor: PositionFloor = new Map();
    this.assembler.heldPositions(floor);
    for (const held of this.#settling.values()) foldFloor(floor, held);
    for (const held of this.#judging) foldFloor(floor, held);
    const out = new Map<number, number>();
    for (const [partition, next] of this.#nextOffset) {
      const held = floor.get(partition);
      out.set(partition, held === undefined || held > next ? next : held);
    }
    return out;
  }

  /** Resolves once every closed trajectory's output known so far is durable (committable moved past it). */
  async settled(): Promise<void> {
    while (this.#settleLoop !== undefined || this.#awaitingJudge.size > 0) {
      await this.#judgedParts();
      if (this.#settleLoop !== undefined) await this.#settleLoop;
    }
  }

  async #judgedParts(): Promise<void> {
    while (this.#awaitingJudge.size > 0) await Promise.all([...this.#awaitingJudge]);
  }

  /**
   * Forgets what `partitions` fed, without emitting it: the source lost them (a rebalance) or
   * stops, and whoever reads them next replays from the committed offset.
   */
  dropPartitions(partitions: Iterable<number>): { dropped: number; mixed: number } {
    const set = new Set(partitions);
    for (const p of set) this.#nextOffset.delete(p);
    for (const [seq, held] of this.#settling) {
      for (const p of set) held.delete(p);
      if (held.size === 0) this.#settling.delete(seq);
    }
    for (const held of this.#judging) for (const p of set) held.delete(p);
    return this.assembler.dropPartitions(set);
  }

  async #settle(): Promise<void> {
    while (this.#settling.size > 0) {
      const upTo = this.#settleSeq;
      try {
        await this.flushed();
      } catch {
        // A failing log is reported through admission(); the positions stay held meanwhile.
        await new Promise((r) => setTimeout(r, SETTLE_RETRY_MS));
        continue;
      }
      for (const seq of this.#settling.keys()) {
        if (seq > upTo) break;
        this.#settling.delete(seq);
      }
    }
    this.#settleLoop = undefined;
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

  #closed(t: Trajectory, positions: PositionFloor | undefined, captured: () => Step[]): void {
    this.counts.trajectoriesClosed++;
    const forwarded = this.#options.forward?.forward(t, captured);
    if (forwarded !== undefined) {
      this.counts.trajectoriesForwarded++;
      this.#holdUntil(positions, forwarded);
      return;
    }
    this.#options.trajectoryLog?.append([
      JSON.stringify(trajectoryToJson(t, { llmInput: this.#options.trajectoryLlmInput ?? false })),
    ]);
    const analysis = this.#options.analyze(t);
    const { findings } = analysis;
    this.counts.findingsEmitted += findings.length;
    if (findings.length > 0) for (const sink of this.#options.sinks) sink.write(findings, 'findings');
    const judged = this.#options.decisions?.consider(t, analysis.checks, findings) ?? JUDGE_DISABLED;
    this.#options.onTrajectory?.(t, analysis);
    if (!(judged instanceof Promise)) {
      this.#manifest(t, analysis, judged);
      this.#hold(positions);
      return;
    }
    // Its positions stay held until the judged findings, and the manifest naming them, are written.
    const held: PositionFloor = positions ?? new Map();
    this.#judging.add(held);
    const waiting = judged.then((part) => {
      try {
        this.#manifest(t, analysis, part);
      } finally {
        // Moved, not dropped: from here they wait for what was written to become durable.
        this.#judging.delete(held);
        this.#awaitingJudge.delete(waiting);
        if (positions !== undefined && held.size > 0) this.#hold(held);
      }
    });
    this.#awaitingJudge.add(waiting);
  }

  /** Writes the revision's analysis manifest to every sink (the findings stream). */
  #manifest(t: Trajectory, analysis: Analysis, judged: JudgedPart): void {
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
    this.counts.manifestsEmitted++;
    for (const sink of this.#options.sinks) sink.writeManifest?.(manifest);
    this.#options.onManifest?.(manifest);
    this.#timeDurability();
  }

  /** Positions are released once `acknowledged` resolves (a forward, which never rejects). */
  #holdUntil(positions: PositionFloor | undefined, acknowledged: Promise<void>): void {
    const held: PositionFloor = positions ?? new Map();
    this.#judging.add(held);
    const waiting = acknowledged.finally(() => {
      this.#judging.delete(held);
      this.#awaitingJudge.delete(waiting);
    });
    this.#awaitingJudge.add(waiting);
  }

  /** Positions are released once everything written so far is durable. */
  #hold(positions: PositionFloor | undefined): void {
    if (positions === undefined) return;
    this.#settling.set(++this.#settleSeq, positions);
    this.#settleLoop ??= this.#settle();
  }
}

/** What a pipeline built without the topology refuses for: its trajectory log, then its sinks. */
function ownOutputs(options: PipelineOptions): HealthReporter[] {
  const { trajectoryLog: log, maxPendingTrajectoryBytes = Infinity } = options;
  return [
    ...(log === undefined ? [] : [{ health: () => logRefusal(log, maxPendingTrajectoryBytes, TRAJECTORY_LOG_REFUSALS) }]),
    ...options.sinks.map((sink) => ({ health: () => sink.backpressure() })),
  ];
}
