import { type LevelLog, stderrLog } from '../../telemetry/logger.ts';
import { type Kafka, type Consumer, type EachBatchPayload, type KafkaMessage, PartitionAssigners, type Producer } from 'kafkajs';
import { ConfigError, UpstreamError } from '../../errors.ts';
import { kafkaClient } from '../../kafka/client.ts';
import { coPartitionedAssigner } from '../../kafka/co-partitioned-assigner.ts';
import { ensureTopics } from '../../kafka/topics.ts';
import { whileSettling } from '../../kafka/settle.ts';
import type { KafkaSourceConfig } from './config.ts';
import { DeadLetters } from './dead-letter.ts';
import { decodeLogsRecord, decodeRecord, isUndecodable, type Undecodable } from './record.ts';
import { checkSourceTopics, deadLetterTopic, logsPositionPartition, sourceTopics } from './topics.ts';
import type { PositionedInput, SourcePosition } from '../pipeline-input.ts';

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
  /** Log records decoded from the logs topic (content events or not). */
  logRecordsConsumed: number;
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
  /** Partitions of the logs topic assigned (the same as `assignedPartitions` under co-partitioning). */
  assignedLogPartitions: number[];
  /** Records behind the high watermark on the assigned partitions, as of each partition's last batch. */
  lagRecords: number;
}

const STOP_SETTLE_TIMEOUT_MS = 5_000;
/** How long a commit may delay a rejoin or a stop; an unfinished one only means a longer replay. */
const COMMIT_WAIT_MS = 2_000;

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
 *
 * With `logs.enabled` it reads the logs topic too, handing each record to `acceptLogs` as a
 * `/v1/logs` export is, its offset committed under the same rule. Partition p of both topics
 * is assigned to one member ({@link coPartitionedAssigner}): a trace's spans and its content
 * events, keyed alike by the Collector, meet in one assembler.
 */
export class KafkaSource {
  readonly config: KafkaSourceConfig;
  readonly #target: PositionedInput;
  readonly #consumer: Consumer;
  readonly #producer: Producer;
  readonly #log: LevelLog;
  readonly #reader: RecordReader;
  /** The topics consumed: the spans (or stage 2's) topic, and the logs topic when read. */
  readonly #topics: string[];
  readonly #logsTopic: string | undefined;
  #assigned = new Set<number>();
  #assignedLogs = new Set<number>();
  readonly #lag = new Map<number, number>();
  #commitTimer: NodeJS.Timeout | undefined;
  #committing: Promise<void> | undefined;
  #inBatch: Promise<void> | undefined;
  #stopping = false;
  #commitFailing = false;
  readonly #deadLetters: DeadLetters;
  readonly #stats = {
    recordsConsumed: 0,
    spansConsumed: 0,
    logRecordsConsumed: 0,
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
    // Logs are OTLP: stage 2 of a repartition (its own reader) reads only its topic.
    this.#logsTopic = reader === undefined && config.logs.enabled ? config.logs.topic : undefined;
    this.#topics = reader === undefined ? sourceTopics(config) : [config.topic];
    this.#consumer = kafka.consumer({
      // Co-partitioned first; round robin (the same with one topic) lets an older member share the group while it is rolled.
      partitionAssigners: [coPartitionedAssigner, PartitionAssigners.roundRobin],
      groupId: config.groupId,
      sessionTimeout: config.sessionTimeoutMs,
      heartbeatInterval: config.heartbeatIntervalMs,
      rebalanceTimeout: config.rebalanceTimeoutMs,
      maxBytesPerPartition: config.maxBytesPerPartition,
      allowAutoTopicCreation: false,
    });
    this.#producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    this.#deadLetters = new DeadLetters(this.#producer, config.deadLetterTopic, log);
  }

  /**
   * Joins the group and starts consuming; resolves after the first join.
   * @throws ConfigError for a missing source topic that may not be created, a logs topic of
   *   another partition count, unreadable secrets; UpstreamError when the broker cannot be reached.
   */
  static async start(config: KafkaSourceConfig, target: PositionedInput, options: KafkaSourceOptions = {}): Promise<KafkaSource> {
    const log = options.log ?? stderrLog('source.kafka');
    if (config.logs.enabled && options.reader === undefined && target.acceptLogs === undefined) {
      throw new Error('kafka source: logs.enabled needs a target that takes logs (acceptLogs)');
    }
    const kafka = kafkaClient(config, { keyPrefix: 'source.kafka.', env: options.env, log });
    const source = new KafkaSource(config, target, kafka, log, options.reader);
    try {
      // Checked before the join: a missing topic is named now, not at the first undecodable record or a kafkajs crash.
      if (options.reader === undefined) await checkSourceTopics(kafka, config);
      else await ensureTopics(kafka, [deadLetterTopic(config)]);
      await source.#run();
    } catch (err) {
      await source.#disconnect();
      if (err instanceof ConfigError) throw err;
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
      deadLettered: { ...this.#deadLetters.sent },
      deadLetterErrors: this.#deadLetters.errors,
      assignedPartitions: [...this.#assigned].sort((a, b) => a - b),
      assignedLogPartitions: [...this.#assignedLogs].sort((a, b) => a - b),
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
    this.#consumer.pause(this.#topics.map((topic) => ({ topic })));
    await this.#inBatch;
    await bounded(this.#target.settled(), STOP_SETTLE_TIMEOUT_MS);
    await bounded(this.#committing, COMMIT_WAIT_MS);
    await bounded(this.#commitNow(), COMMIT_WAIT_MS);
    this.#forget(this.#positionPartitions(), 'stop');
    await this.#disconnect();
  }

  async #run(): Promise<void> {
    const { topic } = this.config;
    const events = this.#consumer.events;
    this.#consumer.on(events.GROUP_JOIN, (e) => {
      const assignment = e.payload.memberAssignment;
      this.#joined(assignment[topic] ?? [], this.#logsTopic === undefined ? [] : (assignment[this.#logsTopic] ?? []));
    });
    this.#consumer.on(events.REBALANCING, () => void this.commit());
    this.#consumer.on(events.CRASH, (e) => {
      this.#log('error', 'kafka consumer crashed', { error: e.payload.error.message, restart: e.payload.restart });
    });
    await Promise.all([this.#consumer.connect(), this.#producer.connect()]);
    // A topic created a moment ago (the sessions topic, by this or a sibling member) may not be in every broker's metadata yet.
    await whileSettling(() => this.#consumer.subscribe({ topics: this.#topics, fromBeginning: this.config.fromBeginning }));
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
      else if (this.#logsTopic !== undefined && partition <= -2 && this.#assignedLogs.has(logsPositionPartition(partition))) {
        offsets.push({ topic: this.#logsTopic, partition: logsPositionPartition(partition), offset: String(offset) });
      }
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

  #joined(partitions: number[], logPartitions: number[]): void {
    this.#stats.joins++;
    // kafkajs fetches every assigned partition again from its committed offset after a join.
    const { dropped, mixed } = this.#forget(this.#positionPartitions(), 'rebalance');
    this.#assigned = new Set(partitions);
    this.#assignedLogs = new Set(logPartitions);
    const held = this.#positionPartitions();
    for (const p of this.#lag.keys()) if (!held.has(p)) this.#lag.delete(p);
    const sorted = [...this.#assigned].sort((a, b) => a - b);
    this.#log('info', 'partitions assigned', {
      topic: this.config.topic,
      ...(this.#logsTopic === undefined ? {} : { logsTopic: this.#logsTopic }),
      groupId: this.config.groupId,
      partitions: sorted,
      droppedOpenTrajectories: dropped,
      mixedPartitionTrajectories: mixed,
    });
    if (this.#logsTopic !== undefined && sorted.join() !== [...this.#assignedLogs].sort((a, b) => a - b).join()) {
      // A member of an older version chose round robin: content events may reach another member than their spans.
      this.#log('warn', 'spans and logs partitions assigned apart: is every member of the group co-partitioning?', {
        partitions: sorted,
        logPartitions: [...this.#assignedLogs].sort((a, b) => a - b),
      });
    }
  }

  /** The position partitions (`logsPositionPartition`) of everything assigned now. */
  #positionPartitions(): Set<number> {
    const all = new Set(this.#assigned);
    for (const p of this.#assignedLogs) all.add(logsPositionPartition(p));
    return all;
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
    const partition = batch.topic === this.#logsTopic ? logsPositionPartition(batch.partition) : batch.partition;
    const read = batch.topic === this.#logsTopic ? this.#logs : this.#reader;
    const highWatermark = Number(batch.highWatermark);
    for (const message of batch.messages) {
      if (!isRunning() || isStale() || this.#stopping) return;
      if (this.#target.admission() !== undefined) await this.#waitForAdmission(heartbeat);
      if (this.#stopping) return;
      const offset = Number(message.offset);
      await this.#take(read, batch.topic, partition, offset, message, heartbeat);
      resolveOffset(message.offset);
      this.#lag.set(partition, Math.max(0, highWatermark - offset - 1));
    }
    await this.#heartbeat(heartbeat);
  }

  /** `partition`: the position partition (`logsPositionPartition` for the logs topic). */
  async #take(read: RecordReader, topic: string, partition: number, offset: number, message: KafkaMessage, heartbeat: () => Promise<void>): Promise<void> {
    const taken = read(message.value, { partition, offset });
    this.#stats.recordsConsumed++;
    if (typeof taken !== 'number') {
      const own = topic === this.#logsTopic ? logsPositionPartition(partition) : partition;
      await this.#deadLetters.send(`${topic}/${own}/${offset}`, message, taken.reason, taken.detail, () => this.#heartbeat(heartbeat));
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

  /** A record of the logs topic, handed on as a `/v1/logs` export is; counts as no spans. */
  readonly #logs: RecordReader = (value, position) => {
    const decoded = decodeLogsRecord(value, this.config.logs.encoding);
    if (isUndecodable(decoded)) return decoded;
    this.#target.acceptLogs!(decoded, position);
    this.#stats.logRecordsConsumed += decoded.logs.length;
    return 0;
  };

  /** Pauses the topic while the pipeline refuses input; nothing is dropped. */
  async #waitForAdmission(heartbeat: () => Promise<void>): Promise<void> {
    const topics = this.#topics.map((topic) => ({ topic }));
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
