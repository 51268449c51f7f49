import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka } from 'kafkajs';
import { ConfigError } from '../errors.ts';
import { kafkaClientConfig } from '../sinks/kafka/client-config.ts';
import { followLines } from '../storage/follow-lines.ts';
import { resolveConfig } from './resolve-config.ts';

export const TAIL_HELP = `Usage: trajwatch tail [options]

Prints findings as they arrive, one JSON object per line: from the local log in the data
directory, or with --kafka from the findings topic of the configured brokers. The same log and
topic also carry one analysis manifest per closed trajectory revision (record_kind
"analysis-manifest"; see \`trajwatch schema record\`): --kind chooses what is printed.

Options:
  --data-dir DIR     data directory of a running or past serve (default ./data; env TRAJWATCH_DATA_DIR)
  --kafka            read the Kafka topic instead (config "kafka", or env TRAJWATCH_KAFKA_BROKERS)
  --alarms           coordinator alarms only (alarms.jsonl, or the alarms topic)
  --kind KIND        finding (default), manifest, or all
  --from-start       print what is already there first (default: only what arrives from now on)
  --max N            stop after N printed records
  --timeout-ms MS    stop after this long (default: run until interrupted)
  --config FILE      JSON configuration file
  --help             this text
`;

const POLL_MS = 200;

export async function tailCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      'data-dir': { type: 'string' },
      kafka: { type: 'boolean' },
      alarms: { type: 'boolean' },
      'from-start': { type: 'boolean' },
      max: { type: 'string' },
      'timeout-ms': { type: 'string' },
      kind: { type: 'string' },
      config: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help === true) {
    process.stdout.write(TAIL_HELP);
    return 0;
  }
  const config = await resolveConfig(values.config, [{ path: ['dataDir'], value: values['data-dir'] }]);
  const max = values.max === undefined ? Infinity : positiveInt(values.max, '--max');
  const timeoutMs = values['timeout-ms'] === undefined ? undefined : positiveInt(values['timeout-ms'], '--timeout-ms');
  const kind = values.kind ?? 'finding';
  if (kind !== 'finding' && kind !== 'manifest' && kind !== 'all') {
    throw new ConfigError([`--kind: expected finding, manifest or all, got "${kind}"`], 'tail');
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const timer = timeoutMs === undefined ? undefined : setTimeout(onSignal, timeoutMs);
  let printed = 0;
  const print = (line: string): boolean => {
    if (kind !== 'all' && (isManifestLine(line) ? 'manifest' : 'finding') !== kind) return !stop.signal.aborted;
    process.stdout.write(`${line}\n`);
    printed++;
    if (printed >= max) stop.abort();
    return !stop.signal.aborted;
  };
  try {
    if (values.kafka === true) {
      if (config.kafka === undefined) {
        throw new ConfigError(['kafka: --kafka needs "kafka.brokers" in the config or TRAJWATCH_KAFKA_BROKERS'], 'tail');
      }
      const topic = values.alarms === true ? config.kafka.topics.alarms : config.kafka.topics.findings;
      await tailTopic(kafkaClientConfig(config.kafka, process.env, 'kafka.'), topic, values['from-start'] === true, print, stop.signal);
    } else {
      const file = join(resolve(config.dataDir), values.alarms === true ? 'alarms.jsonl' : 'findings.jsonl');
      await tailFile(file, values['from-start'] === true, print, stop.signal);
    }
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return 0;
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
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError([`${flag}: expected a positive integer, got "${value}"`], 'tail');
  return n;
}

/** Follows the local log across its rotations (`followLines`), printing whole lines only. */
async function tailFile(path: string, fromStart: boolean, print: (line: string) => boolean, signal: AbortSignal): Promise<void> {
  for await (const line of followLines(path, { fromStart, pollMs: POLL_MS, signal })) if (!print(line)) return;
}

/** Reads a topic with a throwaway consumer group that commits nothing. */
async function tailTopic(
  client: ConstructorParameters<typeof Kafka>[0],
  topic: string,
  fromStart: boolean,
  print: (line: string) => boolean,
  signal: AbortSignal,
): Promise<void> {
  const consumer = new Kafka(client).consumer({ groupId: `trajwatch-tail-${randomUUID()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: fromStart });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        if (!signal.aborted && message.value !== null) print(message.value.toString('utf8'));
      },
    });
    await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
  } finally {
    await consumer.disconnect();
  }
}
