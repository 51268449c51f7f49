import { type LevelLog, stderrLog } from '../../telemetry/logger.ts';
import { Backoff } from '../../storage/backoff.ts';
import type { Kafka, Consumer, EachBatchPayload, IHeaders, KafkaMessage, Producer } from 'kafkajs';
import { UpstreamError } from '../../errors.ts';
import { kafkaClient } from '../../kafka/client.ts';
import { ensureTopics } from '../../kafka/topics.ts';
import { whileSettling } from '../../kafka/settle.ts';
import type { KafkaSourceConfig } from './config.ts';
import { type DeadLetterReason, decodeRecord, isUndecodable, type Undecodable } from './record.ts';
import type { PositionedInput, SourcePosition } from '../pipeline-input.ts';
import type { DecodedRequest } from '../span.ts';

/**
 * How a record's value becomes input: decoded and handed to the target, returning the spans it
 * carried, or an {@link Undecodable} (then dead-lettered, and the partition moves on). The
 * default reads OTLP (`decodeRecord`); stage 2 of a repartition reads its own records.
 */
export type RecordReader = (value: Buffer | null, position: SourcePosition) => number | Undecodable;

export interface KafkaSourceOptions {
  log?: LevelLog;
  /** Default: OTLP in `config.encoding`, to `target.accept`. */
  reader?: RecordReader;
  /** Where `sasl.passwordEnv` is looked up (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** Counters for metrics and tests, all since start. */
export interface KafkaSourceStats {
  /** Records taken from the topic (decoded or dead-lettered). */
  recordsConsumed: number;
  spansConsumed: number;
  /** Records sent to the dead-letter topic, by reason. */
  deadLettered: Record<string, number>;
  /** Failed dead-letter produce attempts (each is retried; the partition waits). */
  deadLetterErrors: number;
  /** Successful offset commits, and failed ones (a later commit covers them). */
  commits: number;
  commitErrors: number;
  /** Times consumption paused because the pipeline refused input, and whether it is paused now. */
  pauses: number;
  paused: boolean;
  /** Group joins (the first one included): each replays the assigned partitions from their commits. */
  joins: number;
  /** Open trajectories forgotten at a join or stop, to be rebuilt by the replay. */
  droppedTrajectories: number;
  /** Open trajectories fed from two partitions (the producer did not key by trace id). */
  mixedPartitionTrajectories: number;
  assignedPartitions: number[];
  /** Records behind the high watermark on the assigned partitions, as of each partition's last batch. */
  lagRecords: number;
}

const STOP_SETTLE_TIMEOUT_MS = 5_000;
/** How long a commit may delay a rejoin or a stop; an unfinished one only means a longer replay. */
const COMMIT_WAIT_MS = 2_000;
/** The backoff between attempts at a failed dead-letter produce (the house Backoff: full jitter). */
const DEAD_LETTER_RETRY_INITIAL_MS = 100;
const DEAD_LETTER_RETRY_MAX_MS = 5_000;
const DLQ_HEADER_REASON = 'trajwatch.dlq.reason';

/**
 * Consumes OTLP records from Kafka as one member of a consumer group and feeds the pipeline.
 *
 * Offsets are committed by hand (kafkajs `autoCommit` off): at `commitIntervalMs`, when a
 * rebalance is noticed, and at stop, each partition at `target.committable()` — below the
 * oldest record still held by an open trajectory or by one whose findings are not yet durable.
 * A crash or a rebalance therefore replays exactly what was not finished; findings are
 * idempotent by `finding_id`, so a replay gives duplicates at most, never a loss.
 *
 * kafkajs rejoins eagerly: after every join it fetches each assigned partition again from its
 * committed offset, so at each join all state from the partitions held before is dropped (not
 * emitted) and rebuilt by that replay, here or on the new owner.
 *
 * Undecodable records go to the dead-letter topic with the reason; the partition moves on.
 * When the pipeline refuses input, the consumer pauses (never drops) until it accepts again.
 */
export class KafkaSource {
  readonly config: KafkaSourceConfig;
  readonly #target: PositionedInput;
  readonly #consumer: Consumer;
  readonly #producer: Producer;
  readonly #log: LevelLog;
  readonly #reader: RecordReader;
  #assigned = new Set<number>();
  readonly #lag = new Map<number, number>();
  #commitTimer: NodeJS.Timeout | undefined;
  #committing: Promise<void> | undefined;
  #inBatch: Promise<void> | undefined;
  #stopping = false;
  #commitFailing = false;
  readonly #loggedReasons = new Set<string>();
  readonly #stats = {
    recordsConsumed: 0,
    spansConsumed: 0,
    deadLettered: {} as Record<string, number>,
    deadLetterErrors: 0,
    commits: 0,
    commitErrors: 0,
    pauses: 0,
    paused: false,
    joins: 0,
    droppedTrajectories: 0,
    mixedPartitionTrajectories: 0,
  };

  private constructor(config: KafkaSourceConfig, target: PositionedInput, kafka: Kafka, log: LevelLog, reader: RecordReader | undefined) {
    this.config = config;
    this.#target = target;
    this.#log = log;
    this.#reader = reader ?? ((value, position) => this.#otlp(value, position));
    this.#consumer = kafka.consumer({
      groupId: config.groupId,
      sessionTimeout: config.sessionTimeoutMs,
      heartbeatInterval: config.heartbeatIntervalMs,
      rebalanceTimeout: config.rebalanceTimeoutMs,
      maxBytesPerPartition: config.maxBytesPerPartition,
      allowAutoTopicCreation: false,
    });
    this.#producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  }

  /**
   * Joins the group and starts consuming; resolves after the first join.
   * @throws UpstreamError when the broker cannot be reached or the topic does not exist;
   *   ConfigError for unreadable secrets.
   */
  static async start(config: KafkaSourceConfig, target: PositionedInput, options: KafkaSourceOptions = {}): Promise<KafkaSource> {
    const log = options.log ?? stderrLog('source.kafka');
    const kafka = kafkaClient(config, { keyPrefix: 'source.kafka.', env: options.env, log });
    const source = new KafkaSource(config, target, kafka, log, options.reader);
    try {
      if (config.createDeadLetterTopic) {
        await ensureTopics(kafka, [
          { topic: config.deadLetterTopic, create: { numPartitions: 1, replicationFactor: -1 }, fix: 'create it', where: 'the Kafka cluster (source.kafka)' },
        ]);
      }
      await source.#run();
    } catch (err) {
      await source.#disconnect();
      throw new UpstreamError(`kafka source: cannot consume ${config.topic}: ${(err as Error).message}`, {
        retriable: true,
        cause: err,
        context: { brokers: config.brokers, topic: config.topic, groupId: config.groupId },
      });
    }
    return source;
  }

  stats(): KafkaSourceStats {
    let lagRecords = 0;
    for (const p of this.#assigned) lagRecords += this.#lag.get(p) ?? 0;
    return {
      ...this.#stats,
      deadLettered: { ...this.#stats.deadLettered },
      assignedPartitions: [...this.#assigned].sort((a, b) => a - b),
      lagRecords,
    };
  }

  /**
   * Stops consuming, waits (bounded) for closed trajectories' findings to be durable, commits,
   * forgets the open trajectories without emitting them (the next owner replays them) and
   * leaves the group.
   */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    clearInterval(this.#commitTimer);
    this.#consumer.pause([{ topic: this.config.topic }]);
    await this.#inBatch;
    await bounded(this.#target.settled(), STOP_SETTLE_TIMEOUT_MS);
    await bounded(this.#committing, COMMIT_WAIT_MS);
    await bounded(this.#commitNow(), COMMIT_WAIT_MS);
    this.#forget(this.#assigned, 'stop');
    await this.#disconnect();
  }

  async #run(): Promise<void> {
    const { topic } = this.config;
    const events = this.#consumer.events;
    this.#consumer.on(events.GROUP_JOIN, (e) => this.#joined(e.payload.memberAssignment[topic] ?? []));
    this.#consumer.on(events.REBALANCING, () => void this.commit());
    this.#consumer.on(events.CRASH, (e) => {
      this.#log('error', 'kafka consumer crashed', { error: e.payload.error.message, restart: e.payload.restart });
    });
    await Promise.all([this.#consumer.connect(), this.#producer.connect()]);
    // A topic created a moment ago (the sessions topic, by this or a sibling member) may not be in every broker's metadata yet.
    await whileSettling(() => this.#consumer.subscribe({ topics: [topic], fromBeginning: this.config.fromBeginning }));
    await this.#consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) => {
        const done = this.#batch(payload);
        this.#inBatch = done.then(
          () => undefined,
          () => undefined,
        );
        return done;
      },
    });
    this.#commitTimer = setInterval(() => void this.commit(), this.config.commitIntervalMs);
  }

  /** Commits what is committable now (one commit at a time; errors are counted and logged once). */
  commit(): Promise<void> {
    this.#committing ??= this.#commitNow().finally(() => (this.#committing = undefined));
    return this.#committing;
  }

  async #commitNow(): Promise<void> {
    const offsets: { topic: string; partition: number; offset: string }[] = [];
    for (const [partition, offset] of this.#target.committable()) {
      if (this.#assigned.has(partition)) offsets.push({ topic: this.config.topic, partition, offset: String(offset) });
    }
    if (offsets.length === 0) return;
    try {
      await this.#consumer.commitOffsets(offsets);
      this.#stats.commits++;
      if (this.#commitFailing) this.#log('info', 'offset commits succeed again');
      this.#commitFailing = false;
    } catch (err) {
      // Not committing only means a longer replay; the next commit covers these offsets.
      this.#stats.commitErrors++;
      if (!this.#commitFailing) this.#log('warn', 'offset commit failed; retried at the next interval', { error: (err as Error).message });
      this.#commitFailing = true;
    }
  }

  #joined(partitions: number[]): void {
    this.#stats.joins++;
    // kafkajs fetches every assigned partition again from its committed offset after a join.
    const { dropped, mixed } = this.#forget(this.#assigned, 'rebalance');
    this.#assigned = new Set(partitions);
    for (const p of this.#lag.keys()) if (!this.#assigned.has(p)) this.#lag.delete(p);
    this.#log('info', 'partitions assigned', {
      topic: this.config.topic,
      groupId: this.config.groupId,
      partitions: [...this.#assigned].sort((a, b) => a - b),
      droppedOpenTrajectories: dropped,
      mixedPartitionTrajectories: mixed,
    });
  }

  #forget(partitions: ReadonlySet<number>, why: 'rebalance' | 'stop'): { dropped: number; mixed: number } {
    if (partitions.size === 0) return { dropped: 0, mixed: 0 };
    const result = this.#target.dropPartitions(partitions);
    this.#stats.droppedTrajectories += result.dropped;
    this.#stats.mixedPartitionTrajectories += result.mixed;
    if (result.mixed > 0) {
      this.#log('warn', 'open trajectories fed from several partitions kept open: is the topic keyed by trace id?', { ...result, why });
    }
    return result;
  }

  async #batch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { partition } = batch;
    const highWatermark = Number(batch.highWatermark);
    for (const message of batch.messages) {
      if (!isRunning() || isStale() || this.#stopping) return;
      if (this.#target.admission() !== undefined) await this.#waitForAdmission(heartbeat);
      if (this.#stopping) return;
      const offset = Number(message.offset);
      await this.#take(partition, offset, message, heartbeat);
      resolveOffset(message.offset);
      this.#lag.set(partition, Math.max(0, highWatermark - offset - 1));
    }
    await this.#heartbeat(heartbeat);
  }

  async #take(partition: number, offset: number, message: KafkaMessage, heartbeat: () => Promise<void>): Promise<void> {
    const taken = this.#reader(message.value, { partition, offset });
    this.#stats.recordsConsumed++;
    if (typeof taken !== 'number') {
      await this.#deadLetter(partition, offset, message, taken.reason, taken.detail, heartbeat);
      // An empty request only moves the partition's committable offset past this record.
      this.#target.accept({ spans: [], rejected: [] }, { partition, offset });
      return;
    }
    this.#stats.spansConsumed += taken;
  }

  #otlp(value: Buffer | null, position: SourcePosition): number | Undecodable {
    const decoded = decodeRecord(value, this.config.encoding);
    if (isUndecodable(decoded)) return decoded;
    this.#target.accept(decoded, position);
    return decoded.spans.length;
  }

  /** Sends the record as it came, plus the reason, to the dead-letter topic; retries until the broker has it. */
  async #deadLetter(
    partition: number,
    offset: number,
    message: KafkaMessage,
    reason: DeadLetterReason,
    detail: string,
    heartbeat: () => Promise<void>,
  ): Promise<void> {
    const source = `${this.config.topic}/${partition}/${offset}`;
    if (!this.#loggedReasons.has(reason)) {
      this.#loggedReasons.add(reason);
      this.#log('warn', 'undecodable record sent to the dead-letter topic (logged once per reason)', { reason, detail, record: source });
    }
    const headers: IHeaders = {
      ...message.headers,
      [DLQ_HEADER_REASON]: reason,
      'trajwatch.dlq.detail': detail.slice(0, 1_000),
      'trajwatch.dlq.source': source,
    };
    const backoff = new Backoff(DEAD_LETTER_RETRY_INITIAL_MS, DEAD_LETTER_RETRY_MAX_MS);
    let failing = false;
    for (;;) {
      try {
        await this.#producer.send({
          topic: this.config.deadLetterTopic,
          acks: -1,
          messages: [{ key: message.key, value: message.value, headers }],
        });
        break;
      } catch (err) {
        // The partition waits rather than skip the record; the first failure is logged.
        this.#stats.deadLetterErrors++;
        if (!failing) this.#log('error', 'dead-letter produce failed; retrying', { error: (err as Error).message, record: source });
        failing = true;
        await sleep(backoff.next());
        await this.#heartbeat(heartbeat);
      }
    }
    this.#stats.deadLettered[reason] = (this.#stats.deadLettered[reason] ?? 0) + 1;
  }

  /** Pauses the topic while the pipeline refuses input; nothing is dropped. */
  async #waitForAdmission(heartbeat: () => Promise<void>): Promise<void> {
    const topics = [{ topic: this.config.topic }];
    this.#consumer.pause(topics);
    this.#stats.pauses++;
    this.#stats.paused = true;
    if (this.#stats.pauses === 1) this.#log('info', 'consumer paused: the pipeline refuses input', { reason: this.#target.admission() });
    try {
      while (!this.#stopping && this.#target.admission() !== undefined) {
        await sleep(this.config.admissionRetryMs);
        await this.#heartbeat(heartbeat);
      }
    } finally {
      this.#stats.paused = false;
      if (!this.#stopping) this.#consumer.resume(topics);
    }
  }

  /** A heartbeat that notices a rebalance commits before kafkajs rejoins (the revoke point). */
  async #heartbeat(heartbeat: () => Promise<void>): Promise<void> {
    try {
      await heartbeat();
    } catch (err) {
      await bounded(this.commit(), COMMIT_WAIT_MS);
      throw err;
    }
  }

  async #disconnect(): Promise<void> {
    await Promise.allSettled([this.#consumer.disconnect(), this.#producer.disconnect()]);
  }
}

/** Waits for `promise`, but no longer than `ms`. */
async function bounded(promise: Promise<void> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
