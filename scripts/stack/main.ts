/**
 * `npm run stack -- up | demo | status | down | compose`: the shipped stack from one description
 * (scripts/stack/description.ts), as processes here or as docker-compose.yml.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { parseFlags } from '../../src/cli/flags.ts';
import { generatedFiles } from './compose.ts';
import { demo, reportText } from './demo.ts';
import { down, status, up } from './runner.ts';
import { readState } from './state.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

const HELP = `Usage: npm run stack -- COMMAND [options]

The stack of docker-compose.yml without Docker: Kafka, the Collector (traces and logs to Kafka,
evaluation events to a file), two trajwatch serve --source kafka members, Prometheus with the
alert rules, Alertmanager, each a process on loopback (docs/operations.md "The stack, locally").

Commands:
  up        start every service (free loopback ports), wait until each is ready, print where
  demo      send the JS demo's run(s) through the Collector; print where each finding arrived
  status    each service: running or gone, and where
  down      stop what up started, by pid (TERM, then KILL after 15 s); remove the state directory
  compose   write docker-compose.yml and the generated config files from the description

Options:
  --state-dir DIR   where up keeps pids, logs, configs and data (default .cache/stack)
  --kafka HOST:PORT up: use this broker instead of starting one (it is not stopped by down)
  --suffix S        up: append -S to every topic and group name (a shared broker)
  --member-config F up: top-level sections (JSON or YAML) added to both members' configuration,
                    e.g. a judge section (examples/judge-local.yaml)
  --alarm-wait-ms N demo: also wait this long for a trajwatch alert in Alertmanager (judge on)
  --runs N          demo: how many runs (default 1)
  --wait-ms N       demo: how long to wait for the findings (default 120000)
  --json            demo: print the report as JSON
`;

/** A JSON or YAML file of top-level configuration sections. */
async function readSections(path: string): Promise<Record<string, unknown>> {
  const value = parse(await readFile(path, 'utf8')) as unknown;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`stack: --member-config ${path} must hold a mapping of configuration sections`);
  return value as Record<string, unknown>;
}

function positive(name: string, value: string | undefined, fallback: number): number {
  const n = Number(value ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`stack: ${name} must be a positive integer, got "${value}"`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const flags = parseFlags(rest, HELP, { strings: ['state-dir', 'kafka', 'suffix', 'runs', 'wait-ms', 'member-config', 'alarm-wait-ms'], booleans: ['json'] });
  if (flags === undefined) return 0;
  const stateDir = resolve(flags.values['state-dir'] ?? join(ROOT, '.cache/stack'));
  switch (command) {
    case 'up':
      await up({
        stateDir,
        kafka: flags.values.kafka?.split(','),
        suffix: flags.values.suffix ?? '',
        memberConfig: flags.values['member-config'] === undefined ? undefined : await readSections(flags.values['member-config']),
      });
      return 0;
    case 'down':
      await down({ stateDir });
      return 0;
    case 'status':
      return (await status(stateDir)) ? 0 : 3;
    case 'demo': {
      const state = await readState(stateDir);
      if (state === undefined) throw new Error(`stack: not up in ${stateDir}; run \`npm run stack -- up\` first`);
      const report = await demo(state, {
        runs: positive('--runs', flags.values.runs, 1),
        expectPerRun: 4,
        waitMs: positive('--wait-ms', flags.values['wait-ms'], 120_000),
        alarmWaitMs: flags.values['alarm-wait-ms'] === undefined ? 0 : positive('--alarm-wait-ms', flags.values['alarm-wait-ms'], 1),
      });
      process.stdout.write(flags.values.json === true ? `${JSON.stringify(report)}\n` : reportText(report));
      return report.missing.length === 0 ? 0 : 1;
    }
    case 'compose':
      for (const [path, text] of generatedFiles()) {
        await mkdir(dirname(join(ROOT, path)), { recursive: true });
        await writeFile(join(ROOT, path), text);
        process.stdout.write(`wrote ${path}\n`);
      }
      return 0;
    default:
      process.stderr.write(`stack: unknown command ${JSON.stringify(command ?? '')}\n\n${HELP}`);
      return 2;
  }
}

process.exitCode = await main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  return 1;
});
