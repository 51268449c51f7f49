#!/usr/bin/env node
import { ConfigError, TrajwatchError, UsageError } from '../errors.ts';
import { calibrateCommand } from './calibrate.ts';
import { onClosedStdout } from './exit-on-epipe.ts';
import { labelCommand } from './label.ts';
import { reliabilityCommand } from './reliability.ts';
import { replayCommand } from './replay.ts';
import { schemaCommand } from './schema.ts';
import { serveCommand } from './serve.ts';
import { showCommand } from './show.ts';
import { tailCommand } from './tail.ts';
import { validateConfigCommand } from './validate-config.ts';
import { verifyCommand } from './verify.ts';

const HELP = `trajwatch — a streaming analyzer for AI-agent telemetry

Usage: trajwatch <command> [options]

Commands:
  serve              receive OTLP/HTTP, assemble trajectories, run checks, write findings
  replay FILE...     run the same pipeline over recorded OTLP files (JSON or protobuf, .gz too)
  validate-config F  report every configuration error at once
  schema finding     print the finding JSON Schema for consumers in other languages
  tail               print findings as they arrive (local log, or --kafka)
  show KEY           one trajectory as a timeline of its steps, its findings marked
  calibrate          join gold labels with recorded judge answers; write certificates
  label              serve a page to label judged windows (gold for calibrate)
  reliability        how the judge's probabilities hold up against labels; writes a PNG
  verify             check every invariant over a data directory's output (and --kafka topic)

Run 'trajwatch <command> --help' for a command's options.
`;

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  serve: serveCommand,
  replay: replayCommand,
  'validate-config': validateConfigCommand,
  schema: schemaCommand,
  calibrate: calibrateCommand,
  label: (args) => labelCommand(args),
  reliability: reliabilityCommand,
  tail: tailCommand,
  show: showCommand,
  verify: verifyCommand,
};

/** Commands that serve until stopped; the others only print, and end when their reader goes. */
const SERVING: ReadonlySet<string> = new Set(['serve', 'label']);

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    process.stderr.write(`trajwatch: unknown command "${name}"\n\n${HELP}`);
    return 2;
  }
  onClosedStdout(!SERVING.has(name));
  try {
    return await command(rest);
  } catch (err) {
    return report(name, err);
  }
}

/** One line (or one list) for what the user can fix; a stack only for what they cannot. */
function report(name: string, err: unknown): number {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (err instanceof UsageError || (err instanceof TypeError && code?.startsWith('ERR_PARSE_ARGS_') === true)) {
    // parseArgs's own text says what is wrong and how to write it (`--max=-1`); no stack.
    process.stderr.write(`trajwatch ${name}: ${err.message}\nRun 'trajwatch ${name} --help' for its options.\n`);
    return 2;
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`trajwatch: ${err.message}\n`);
    return 1;
  }
  if (err instanceof TrajwatchError) process.stderr.write(`trajwatch: ${err.message}\n`);
  else process.stderr.write(`trajwatch: unexpected failure: ${(err as Error).stack ?? String(err)}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`trajwatch: unexpected failure: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 2;
  },
);
