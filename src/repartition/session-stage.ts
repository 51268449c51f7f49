import type { RecordReader } from '../ingest/kafka/source.ts';
import type { PositionedInput, PositionFloor, SourcePosition } from '../ingest/pipeline-input.ts';
import type { CaptureConflict, IncompleteReason } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import type { LevelLog } from '../telemetry/logger.ts';
import { type FragmentLoss, type LostTrace, Reassembly, type ReassemblyOptions, type ReassemblyStats } from './reassembly.ts';
import { decodeRepartitionRecord, type RepartitionFragment, type RepartitionRecord } from './record.ts';

/** One closed stage-1 trace as stage 2 takes it (the pipeline's `ForwardedTrace`, declared here: the pipeline sits above). */
interface ForwardedTrace {
  sessionId: string;
  traceId: string;
  steps: readonly Step[];
  capture: { incompleteReasons: readonly IncompleteReason[]; conflicts: readonly CaptureConflict[]; refusedSpans: number };
}

/** Stage 2's pipeline as the session stage feeds it: a positioned input that also takes forwarded traces. */
export type SessionTarget = PositionedInput & { acceptForwarded(trace: ForwardedTrace, position?: SourcePosition): void };

/** An empty request: only moves the partition's accepted offset past a record. */
const NOTHING = { spans: [], rejected: [] };

/**
 * Stage 2's side of the internal topic (docs/scaling-out.md §4): {@link reader} turns each record
 * into input of the session pipeline — a whole trace, a refusal (`repartition-refused`), or a
 * fragment, held in the {@link Reassembly} until its trace is whole. {@link input} is the
 * pipeline as the Kafka source sees it, with the first-fragment positions of unfinished traces
 * folded into `committable()` (a crash replays them from their first fragment, nothing
 * acknowledged is lost) and the reassembly forgotten with the partitions. A trace whose
 * fragments cannot be put together marks its session `repartition-fragment-lost`.
 */
export class SessionStage {
  readonly input: PositionedInput;
  readonly reader: RecordReader;
  readonly #target: SessionTarget;
  readonly #reassembly: Reassembly;
  readonly #log: LevelLog;
  readonly #now: () => number;
  readonly #logged = new Set<FragmentLoss>();
  #lastSweepMs: number;

  constructor(target: SessionTarget, options: ReassemblyOptions, log: LevelLog, now: () => number = Date.now) {
    this.#target = target;
    this.#reassembly = new Reassembly(options);
    this.#log = log;
    this.#now = now;
    this.#lastSweepMs = now();
    this.reader = (value, position) => this.#read(value, position);
    const reassembly = this.#reassembly;
    this.input = {
      admission: () => target.admission(),
      accept: (request, position) => target.accept(request, position),
      settled: () => target.settled(),
      committable: () => {
        const out = target.committable();
        const floor: PositionFloor = new Map();
        reassembly.floor(floor);
        for (const [partition, offset] of floor) {
          const next = out.get(partition);
          if (next !== undefined && offset < next) out.set(partition, offset);
        }
        return out;
      },
      dropPartitions: (partitions) => {
        const set = new Set(partitions);
        reassembly.dropPartitions(set);
        return target.dropPartitions(set);
      },
    };
  }

  stats(): ReassemblyStats {
    return this.#reassembly.stats();
  }

  /**
   * Gives up the traces past their deadline (each marks its session). While the pipeline refuses
   * input the source is paused and the missing fragments cannot come: that time does not count.
   */
  sweep(): void {
    const now = this.#now();
    const elapsed = now - this.#lastSweepMs;
    this.#lastSweepMs = now;
    if (this.#target.admission() !== undefined) {
      this.#reassembly.postpone(elapsed);
      return;
    }
    for (const lost of this.#reassembly.expire(now)) this.#lost(lost);
  }

  #read(value: Buffer | null, position: SourcePosition): ReturnType<RecordReader> {
    const record = decodeRepartitionRecord(value);
    if ('error' in record) return { reason: 'invalid-repartition-record', detail: record.error };
    if (record.kind === 'fragment') return this.#fragment(record, position);
    return this.#whole(record, position);
  }

  #whole(record: RepartitionRecord, position: SourcePosition): number {
    const { sessionId, traceId, capture } = record;
    if (record.kind === 'trace') {
      this.#reassembly.supersede(sessionId, traceId);
      this.#target.acceptForwarded({ sessionId, traceId, steps: record.steps, capture }, position);
      return record.steps.length;
    }
    const reasons = [...capture.incompleteReasons, 'repartition-refused' as const];
    this.#target.acceptForwarded({ sessionId, traceId, steps: [], capture: { ...capture, incompleteReasons: reasons } }, position);
    return 0;
  }

  #fragment(fragment: RepartitionFragment, position: SourcePosition): ReturnType<RecordReader> {
    const outcome = this.#reassembly.add(fragment, position, this.#now());
    // The ledger learns of the record; the reassembly's floor keeps the trace's first fragment uncommitted.
    this.#target.accept(NOTHING, position);
    if (outcome.kind === 'lost') this.#lost(outcome.lost);
    if (outcome.kind !== 'whole') return 0;
    const whole = decodeRepartitionRecord(outcome.record);
    if ('error' in whole || whole.kind === 'fragment') {
      this.#lost({
        sessionId: fragment.sessionId,
        traceId: fragment.traceId,
        loss: 'digest-mismatch',
        position: outcome.position,
        received: fragment.count,
        count: fragment.count,
      });
      return { reason: 'invalid-repartition-record', detail: `reassembled: ${'error' in whole ? whole.error : 'a fragment inside a fragment'}` };
    }
    // Held from its first fragment's position on, as if it had come whole there.
    return this.#whole(whole, outcome.position ?? position);
  }

  #lost(lost: LostTrace): void {
    if (!this.#logged.has(lost.loss)) {
      this.#logged.add(lost.loss);
      this.#log('warn', 'a fragmented trace could not be put together: its session is marked repartition-fragment-lost (logged once per loss)', { ...lost });
    }
    const capture = { incompleteReasons: ['repartition-fragment-lost' as const], conflicts: [], refusedSpans: 0 };
    this.#target.acceptForwarded({ sessionId: lost.sessionId, traceId: lost.traceId, steps: [], capture }, lost.position);
  }
}
