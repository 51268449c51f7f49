import { Assembler } from '../assemble/assembler.ts';
import { refuseDemand } from '../assemble/request-admission.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { Finding } from '../findings/schema.ts';
import type { DroppedPartitions, LogsAccepted, PipelineInput, PositionFloor, RequestDemand, SourcePosition } from '../ingest/pipeline-input.ts';
import type { DecodedLogsRequest } from '../ingest/log-record.ts';
import { demandOf } from '../ingest/request-demand.ts';
import type { DecodedRequest } from '../ingest/span.ts';
import { JUDGE_DISABLED, type JudgedPart } from '../judge/consideration.ts';
import { isContentEventName, logEventName } from '../normalize/content-events.ts';
import { normalizeSpan } from '../normalize/normalize.ts';
import type { Step } from '../normalize/step.ts';
import { type LogCounts, logOutcomes, type PipelineCounts } from './counts.ts';
import type { ForwardedTrace } from './forwarding.ts';
import type { PipelineOptions } from './options.ts';
import { PipelineOutputs } from './outputs.ts';
import { PositionLedger } from './position-ledger.ts';

/**
 * Closing (and analyzing) due trajectories in `serve` yields to receiving after this long in
 * one event-loop turn. A time budget, not a count: the closes must keep pace with intake,
 * whatever the trajectories' size, or open work (and the heap) grows under load.
 */
const CLOSE_TURN_MS = 5;

/** Trajectories closed between two looks at the clock. */
const CLOSES_PER_CHECK = 16;

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
 * is what the source may commit (the bookkeeping is the {@link PositionLedger}'s). So a crash
 * while a judge call is out replays the trajectory, and the ledger turns the intent it finds
 * without a result into an escalation.
 */
export class Pipeline implements PipelineInput {
  readonly assembler: Assembler;
  readonly #options: PipelineOptions;
  readonly #outputs: PipelineOutputs;
  readonly #positions: PositionLedger;
  #watermarkMs = 0;
  readonly counts: PipelineCounts = {
    spansAccepted: 0,
    spansRejected: 0,
    trajectoriesClosed: 0,
    trajectoriesForwarded: 0,
    findingsEmitted: 0,
    manifestsEmitted: 0,
  };
  readonly logCounts: LogCounts = { refused: 0, notContentEvent: 0, noSpanContext: 0 };
  /** A burst of closes is being worked through in later turns. */
  #tickPending = false;
  /**
   * Per key, the last manifest still waiting on its judge: a later revision's manifest is
   * written after it, so each findings stream names a key's revisions in increasing order.
   */
  readonly #manifestTail = new Map<string, Promise<void>>();

  constructor(options: PipelineOptions) {
    this.#options = options;
    this.#outputs = new PipelineOutputs(options, this.counts);
    this.#positions = new PositionLedger({ flushed: () => this.flushed(), heldOpen: (floor) => this.assembler.heldPositions(floor) });
    const { keyBy = 'session', revisionMemory: memory } = options;
    this.assembler = new Assembler(options.limits, (t, positions, captured) => this.#closed(t, positions, captured), { keyBy, memory });
  }

  admission(): string | undefined {
    return this.#outputs.admission() ?? this.#options.forward?.backpressure() ?? this.assembler.admission();
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
    this.#positions.accepted(position);
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
    this.#positions.accepted(position);
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
    this.#positions.accepted(position);
    this.logCounts.noSpanContext += unattachable;
    this.logCounts.refused += request.rejected.length;
    if (event) this.assembler.advance(this.#watermarkMs);
    return { unattachable };
  }

  /** Every log-record outcome, pipeline and assembler together, for `trajwatch_logs_total`. */
  logOutcomes(): Record<string, number> {
    return logOutcomes(this.logCounts, this.assembler.stats().contentEvents);
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
    await this.#positions.judged();
    await this.flushed();
  }

  /** Judged findings, and the coordinator alarms among them, go to every sink. */
  emitJudged(findings: readonly Finding[], alarms: readonly Finding[]): void {
    this.#outputs.emitJudged(findings, alarms);
  }

  /** Resolves once everything written so far is durable. */
  flushed(): Promise<void> {
    return this.#outputs.flushed();
  }

  /** The lowest source position that steps retained for late spans refer to (their long texts may be there). */
  referencedFrom(partition: number): number | undefined {
    return this.assembler.referencedFrom(partition);
  }

  /** See {@link PositionLedger.committable}. */
  committable(): Map<number, number> {
    return this.#positions.committable();
  }

  /** Resolves once every closed trajectory's output known so far is durable (committable moved past it). */
  settled(): Promise<void> {
    return this.#positions.settled();
  }

  /**
   * Forgets what `partitions` fed, without emitting it: the source lost them (a rebalance) or
   * stops, and whoever reads them next replays from the committed offset.
   */
  dropPartitions(partitions: Iterable<number>): DroppedPartitions {
    const set = new Set(partitions);
    this.#positions.dropPartitions(set);
    return this.assembler.dropPartitions(set);
  }

  #closed(t: Trajectory, positions: PositionFloor | undefined, captured: () => Step[]): void {
    this.counts.trajectoriesClosed++;
    const forwarded = this.#options.forward?.forward(t, captured);
    if (forwarded !== undefined) {
      this.counts.trajectoriesForwarded++;
      this.#positions.holdUntilAcknowledged(positions, forwarded);
      return;
    }
    this.#outputs.writeTrajectory(t);
    const analysis = this.#options.analyze(t);
    this.#outputs.writeFindings(analysis.findings);
    const judged = this.#options.decisions?.consider(t, analysis.checks, analysis.findings) ?? JUDGE_DISABLED;
    this.#options.onTrajectory?.(t, analysis);
    const earlier = this.#manifestTail.get(t.key);
    if (!(judged instanceof Promise) && earlier === undefined) {
      this.#outputs.writeManifest(t, analysis, judged);
      this.#positions.holdUntilDurable(positions);
      return;
    }
    const part = earlier === undefined ? (judged as Promise<JudgedPart>) : earlier.then(() => judged);
    // Its positions stay held until the judged findings, and the manifest naming them, are written.
    this.#positions.holdWhileJudged(positions, part, (p: JudgedPart) => this.#outputs.writeManifest(t, analysis, p));
    // Settles after the write above (callbacks of one promise run in the order they were added).
    const tail = part.then(
      () => undefined,
      () => undefined,
    );
    this.#manifestTail.set(t.key, tail);
    void tail.then(() => {
      if (this.#manifestTail.get(t.key) === tail) this.#manifestTail.delete(t.key);
    });
  }
}
