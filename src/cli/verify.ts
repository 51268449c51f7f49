import { resolve } from 'node:path';
import { ConfigError, UsageError } from '../errors.ts';
import { kafkaClient } from '../kafka/client.ts';
import { createLogger, levelLog } from '../telemetry/logger.ts';
import { DEFAULT_KAFKA_READ_TIMEOUT_MS } from '../verify/read-kafka.ts';
import { verifyDataDir, type VerifyReport } from '../verify/verify.ts';
import { locationText } from '../verify/violation.ts';
import { parseFlags } from './flags.ts';
import { resolveConfig } from './resolve-config.ts';
import { terminalSafe } from './terminal-text.ts';

export const VERIFY_HELP = `Usage: trajwatch verify [options]

Audits what a deployment wrote: reads the data directory's logs (trajectories, findings and
manifests, alarms, the closed-revision memory, the span write-ahead log's accounting, the
quarantine of refused external views) and, with --kafka, the findings topic from its start to
its end offsets, and checks every invariant over them:

  record-schema        every line is JSON of its published shape
  manifest-vs-capture  every none-observed / unavailable agrees with the trajectory's capture
                       and the capture table (a gap that hides a check's subject)
  window-fate          every window has exactly one fate
  audience-strip       every finding and manifest strips for an external audience
  revision-unique      no (key, revision) twice; revisions of a key increase
  finding-id-stable    an id is what its identity inputs make, the same across revisions
  manifest-findings    a manifest names exactly the findings written for its revision
  spans-accounted      every span the write-ahead log released is in some trajectory

A running serve's directory can be read (nothing is written): what is still open or in the
write-ahead log is counted, not reported.

Exit 0 when every invariant holds (one summary line each), 1 with each violation (invariant,
record location, key, what is wrong), 2 on a usage error or an unreadable directory.

Options:
  --data-dir DIR     data directory of a running or past serve, or where replay wrote
                     --trajectories and --findings (default ./data; env TRAJWATCH_DATA_DIR)
  --config FILE      configuration file (JSON or YAML): the local logs' audience, the Kafka sink
  --kafka            also read the Kafka sink's findings topic (config "sinks.kafka")
  --kafka-timeout-ms MS  how long reading the topic to its end may take (default ${DEFAULT_KAFKA_READ_TIMEOUT_MS})
  --json             one JSON object per violation, then one summary object
  --help             this text
`;

export async function verifyCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, VERIFY_HELP, { strings: ['data-dir', 'config', 'kafka-timeout-ms'], booleans: ['kafka', 'json'] });
  if (flags === undefined) return 0;
  const { values } = flags;
  const timeoutMs = values['kafka-timeout-ms'] === undefined ? undefined : Number(values['kafka-timeout-ms']);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
    throw new UsageError(`--kafka-timeout-ms: expected a positive integer, got "${values['kafka-timeout-ms']}"`);
  }
  let report: VerifyReport;
  try {
    const config = await resolveConfig(values.config, [{ path: ['dataDir'], value: values['data-dir'], flag: '--data-dir' }]);
    const kafka = config.sinks.kafka;
    if (values.kafka === true && kafka === undefined) {
      throw new ConfigError(['sinks.kafka: --kafka needs "sinks.kafka.brokers" in the config or TRAJWATCH_SINK_KAFKA_BROKERS'], 'verify');
    }
    const logger = createLogger({ level: config.log.level, destination: 'stderr' });
    report = await verifyDataDir({
      dataDir: resolve(config.dataDir),
      localLog: config.sinks.localLog.audience,
      checks: config.checks,
      ...(values.kafka === true && kafka !== undefined
        ? {
            kafka: {
              client: kafkaClient(kafka, { keyPrefix: 'sinks.kafka.', log: levelLog(logger) }),
              topic: kafka.topics.findings,
              audience: kafka.audience.findings,
              ...(timeoutMs === undefined ? {} : { timeoutMs }),
            },
          }
        : {}),
    });
  } catch (err) {
    // A configuration verify cannot use is a usage error here: exit 1 means a violation.
    if (err instanceof ConfigError) {
      process.stderr.write(`trajwatch verify: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  process.stdout.write(values.json === true ? jsonLines(report) : text(report));
  return report.ok ? 0 : 1;
}

function jsonLines(report: VerifyReport): string {
  const lines = report.violations.map((v) => JSON.stringify({ kind: 'violation', ...v }));
  lines.push(JSON.stringify({ kind: 'summary', ok: report.ok, dataDir: report.dataDir, invariants: report.invariants, read: report.read }));
  return `${lines.join('\n')}\n`;
}

function text(report: VerifyReport): string {
  const lines = report.violations.map(
    (v) =>
      `violation ${v.invariant} ${terminalSafe(locationText(v.location))}${v.key === undefined ? '' : ` key ${terminalSafe(v.key)}`}: ${terminalSafe(v.what)}`,
  );
  const width = Math.max(...report.invariants.map((i) => i.id.length));
  for (const i of report.invariants) {
    const kept = report.violations.filter((v) => v.invariant === i.id).length;
    const more = i.violations > kept ? ` (${i.violations - kept} not listed)` : '';
    lines.push(
      `${i.id.padEnd(width)}  ${i.checked} checked, ${i.violations} violation${i.violations === 1 ? '' : 's'}${more}${i.note === undefined ? '' : `; ${i.note}`}`,
    );
  }
  const read = report.read.filter((r) => r.files > 0 || r.records > 0).map((r) => `${r.source} ${r.records}`);
  lines.push(`verify: ${report.ok ? 'every invariant holds' : 'VIOLATED'} in ${terminalSafe(report.dataDir)} (read: ${read.join(', ') || 'nothing'})`);
  return `${lines.join('\n')}\n`;
}
