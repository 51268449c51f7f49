import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Kafka } from 'kafkajs';
import { ConfigError, UpstreamError, UsageError } from '../errors.ts';
import { audienceView, type Audience } from '../findings/audience.ts';
import type { FindingLogRecord } from '../sinks/finding-sink.ts';
import { kafkaClient } from '../kafka/client.ts';
import { createLogger, levelLog } from '../telemetry/logger.ts';
import { FileFollower } from '../topology/components/file-follower.ts';
import { TopicFollower } from '../topology/components/topic-follower.ts';
import { RunningTopology } from '../topology/running.ts';
import { parseFlags } from './flags.ts';
import { recordText } from './finding-text.ts';
import { resolveConfig } from './resolve-config.ts';
import { parseAudience } from './schema.ts';
import { dataDirPaths } from '../core/data-dir.ts';

export const TAIL_HELP = `Usage: trajwatch tail [options]

Prints findings as they arrive, one per line: from the local log in the data directory, or
with --kafka from the findings topic of the configured brokers. On a terminal each is one
readable line (time, severity, area, trajectory, claim); into a pipe or a file each is its
JSON object, as written; --format chooses. The same log and
topic also carry one analysis manifest per closed trajectory revision (record_kind
"analysis-manifest"; see \`trajwatch schema record\`): --kind chooses what is printed.

Options:
  --data-dir DIR     data directory of a running or past serve (default ./data; env TRAJWATCH_DATA_DIR)
  --kafka            read the Kafka sink's topic instead (config "sinks.kafka", or env TRAJWATCH_SINK_KAFKA_BROKERS)
  --alarms           coordinator alarms only (alarms.jsonl, or the alarms topic)
  --kind KIND        finding (default), manifest, or all
  --audience VIEW    internal (default: each record as stored) or external: without model ids,
                     receipts, ledger keys, certificate ids, window-policy digests (see
                     docs/consumers.md); a line that cannot be stripped stops tail with an error
  --format FORMAT    text (default on a terminal) or json (default otherwise)
  --from-start       print what is already there first (default: only what arrives from now on)
  --max N            stop after N printed records
  --timeout-ms MS    stop after this long (default: run until interrupted)
  --config FILE      configuration file (JSON or YAML)
  --help             this text
`;

export async function tailCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, TAIL_HELP, {
    strings: ['data-dir', 'max', 'timeout-ms', 'kind', 'audience', 'format', 'config'],
    booleans: ['kafka', 'alarms', 'from-start'],
  });
  if (flags === undefined) return 0;
  const { values } = flags;
  const config = await resolveConfig(values.config, [{ path: ['dataDir'], value: values['data-dir'], flag: '--data-dir' }]);
  const max = values.max === undefined ? Infinity : positiveInt(values.max, '--max');
  const timeoutMs = values['timeout-ms'] === undefined ? undefined : positiveInt(values['timeout-ms'], '--timeout-ms');
  const kind = values.kind ?? 'finding';
  if (kind !== 'finding' && kind !== 'manifest' && kind !== 'all') {
    throw new UsageError(`--kind: expected finding, manifest or all, got "${kind}"`);
  }
  const audience = parseAudience(values.audience);
  const format = values.format ?? (process.stdout.isTTY === true ? 'text' : 'json');
  if (format !== 'text' && format !== 'json') {
    throw new UsageError(`--format: expected text or json, got "${format}"`);
  }
  const logger = createLogger({ level: config.log.level, destination: 'stderr' });
  let printed = 0;
  let more = true;
  let failure: Error | undefined;
  let end!: () => void;
  const print = (line: string): boolean => {
    if (!more) return false;
    if (kind !== 'all' && (isManifestLine(line) ? 'manifest' : 'finding') !== kind) return true;
    let out: string;
    try {
      out = view(line, audience);
    } catch (err) {
      // Never print what could not be stripped: stop, and fail the command.
      failure = err instanceof Error ? err : new Error(String(err));
      more = false;
      end();
      return false;
    }
    process.stdout.write(`${format === 'text' ? recordText(out) : out}\n`);
    printed++;
    if (printed >= max) more = false;
    return more;
  };
  let follower: FileFollower | TopicFollower;
  if (values.kafka === true) {
    const kafka = config.sinks.kafka;
    if (kafka === undefined) {
      throw new ConfigError(['sinks.kafka: --kafka needs "sinks.kafka.brokers" in the config or TRAJWATCH_SINK_KAFKA_BROKERS'], 'tail');
    }
    const topic = values.alarms === true ? kafka.topics.alarms : kafka.topics.findings;
    const client = kafkaClient(kafka, { keyPrefix: 'sinks.kafka.', log: levelLog(logger) });
    const missing = await missingTopic(client, topic, values.alarms === true ? 'alarms' : 'findings', kafka.brokers);
    if (missing !== undefined) {
      process.stderr.write(`trajwatch tail: ${missing}\n`);
      return 1;
    }
    follower = new TopicFollower(client, topic, values['from-start'] === true, print);
  } else {
    const paths = dataDirPaths(resolve(config.dataDir));
    const file = values.alarms === true ? paths.alarms : paths.findings;
    // A wrong --data-dir must not look like a quiet service: say what is awaited.
    if (!existsSync(file)) process.stderr.write(`trajwatch tail: waiting for ${file} (not there yet): serve writes it into its --data-dir\n`);
    follower = new FileFollower(file, values['from-start'] === true, print);
  }
  const running = new RunningTopology([[follower]], logger);
  // Ends at a signal, at --timeout-ms, once --max records are printed, or at a line the
  // external view cannot be made of.
  const ended = new Promise<void>((resolveEnd) => (end = resolveEnd));
  process.once('SIGINT', end);
  process.once('SIGTERM', end);
  const timer = timeoutMs === undefined ? undefined : setTimeout(end, timeoutMs);
  void follower.done.then(end);
  try {
    await running.start().catch((err: unknown) => {
      if (err instanceof ConfigError || values.kafka !== true) throw err;
      // One line, not kafkajs's stack: the broker went away, or the topic between the check and the join.
      throw new UpstreamError(`tail --kafka: cannot follow the topic: ${(err as Error).message}`, { retriable: true, cause: err });
    });
    await ended;
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', end);
    process.off('SIGTERM', end);
  }
  const stopped = await running.stop();
  if (stopped.outcome === 'failed') throw stopped.error;
  if (failure !== undefined) throw failure;
  return 0;
}

/**
 * Why `topic` cannot be followed, in one line naming the key that fixes it, or undefined when it
 * exists. tail never creates a topic: serve's Kafka sink does, with `sinks.kafka.createTopics`.
 *
 * @throws UpstreamError when the brokers cannot be asked.
 */
async function missingTopic(kafka: Kafka, topic: string, which: 'findings' | 'alarms', brokers: readonly string[]): Promise<string | undefined> {
  const admin = kafka.admin();
  let topics: string[];
  try {
    await admin.connect();
    topics = await admin.listTopics();
  } catch (err) {
    throw new UpstreamError(`tail --kafka: cannot list the topics of ${brokers.join(',')}: ${(err as Error).message}`, { retriable: true, cause: err });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  if (topics.includes(topic)) return undefined;
  return `topic ${topic} does not exist on ${brokers.join(',')}: serve's Kafka sink creates it at its first record with sinks.kafka.createTopics, or set sinks.kafka.topics.${which} to the topic serve writes`;
}

/** The line as `audience` sees it: itself (internal), or its external view re-serialized. */
function view(line: string, audience: Audience): string {
  if (audience === 'internal') return line;
  let record: FindingLogRecord;
  try {
    record = JSON.parse(line) as FindingLogRecord;
  } catch {
    throw new ConfigError([`a line of the findings stream is not JSON; its external view cannot be made: ${line.slice(0, 80)}`], 'tail');
  }
  return JSON.stringify(audienceView(record, audience));
}

/** A manifest carries `record_kind` (a finding never does); a line that does not parse counts as a finding. */
function isManifestLine(line: string): boolean {
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === 'object' && value !== null && 'record_kind' in value;
  } catch {
    return false;
  }
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag}: expected a positive integer, got "${value}"`);
  return n;
}
