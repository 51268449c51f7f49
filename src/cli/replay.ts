import { UsageError } from '../errors.ts';
import type { FileSourceReport } from '../ingest/file-source.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import { refusalLines } from '../sinks/audience-refusals.ts';
import { createLogger } from '../telemetry/logger.ts';
import { buildTopology } from '../topology/build.ts';
import { parseFlags } from './flags.ts';
import { resolveConfig } from './resolve-config.ts';
import { restrictCreatedFiles } from '../core/private-files.ts';

export const REPLAY_HELP = `Usage: trajwatch replay FILE... [options]

Runs the serve pipeline over recorded OTLP trace files: OTLP/JSON (one request, or one per
line) or protobuf, gzip-compressed or not. OTLP/JSON logs requests (resourceLogs) are read
too: their GenAI content events join the steps of their spans, as in serve. Trajectories close by the spans' own timestamps,
so a replay gives the same output on any machine at any speed; whatever is still open at
the end closes with the reason end-of-input.

Options:
  --trajectories OUT.jsonl  write closed trajectories, one JSON object per line
  --findings OUT.jsonl      write findings, one JSON object per line
  --alarms OUT.jsonl        also write the coordinator alarms among them (judge enabled)
  --config FILE             JSON configuration file (assembler limits, checks...)
  --help                    this text

Always ends with one line on stderr: the files read, the spans kept (and rejected), the
trajectories and findings, and the files written (or that nothing was).

Exit status: 0 when every file replayed, 1 when some file could not be read or decoded
(the others are still replayed and written) or when an external view (sinks.localLog.audience)
refused a record it could not strip: that record is named on stderr and kept whole in
<dataDir>/audience-refused.jsonl, never written to the external log; 2 on a usage error.
`;

const PROGRESS_EVERY_MS = 1_000;

export async function replayCommand(args: string[]): Promise<number> {
  // Raw telemetry (prompts, tool payloads) is its owner's alone: files 0600, directories 0700.
  restrictCreatedFiles();
  const flags = parseFlags(args, REPLAY_HELP, { strings: ['trajectories', 'findings', 'alarms', 'config'], positionals: true });
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  if (positionals.length === 0) {
    process.stderr.write(`replay: no input files\n\n${REPLAY_HELP}`);
    return 2;
  }
  if (values.alarms !== undefined && values.findings === undefined) {
    throw new UsageError('--alarms needs --findings (the alarms are written beside the findings)');
  }
  const config = await resolveConfig(values.config, []);
  // Replay's own report is its stderr lines below; the log carries what the components say.
  const logger = createLogger({ level: config.log.level, destination: 'stderr' });
  let lastProgress = Date.now();
  const report: FileSourceReport = {
    failed: (file, error) => process.stderr.write(`replay: ${file}: ${error.message}\n`),
    note: (file, message) => process.stderr.write(`replay: ${file}: ${message}\n`),
    progress: (done, total) => {
      const now = Date.now();
      if (now - lastProgress < PROGRESS_EVERY_MS) return;
      lastProgress = now;
      process.stderr.write(`replay: ${progress(done, total, topology.pipeline)}\n`);
    },
  };
  const topology = await buildTopology(
    config,
    {
      clock: 'event',
      ...(values.trajectories === undefined ? {} : { trajectoriesPath: values.trajectories }),
      ...(values.findings === undefined
        ? {}
        : { findings: { findingsPath: values.findings, ...(values.alarms === undefined ? {} : { alarmsPath: values.alarms }), truncate: true } }),
      externalSinks: false,
      files: { paths: positionals, report },
    },
    // Nobody scrapes a replay: every component's telemetry is the no-op.
    { registry: undefined, logger },
  );
  const { pipeline, running, audienceRefusals, files } = topology;
  lastProgress = Date.now();
  await running.start();
  // The file source (the plan names files) feeds every one, then ends the input: the stop drains nothing again.
  const { read, failures } = await files!.done;
  const stopped = await running.stop();
  if (stopped.outcome === 'failed') throw stopped.error;
  const refused = refusalLines(audienceRefusals);
  for (const line of refused) process.stderr.write(`replay: ${line}\n`);
  // Always said: a replay that prints nothing looks like one that did nothing.
  const failed = failures === 0 ? '' : `, ${failures} file${failures === 1 ? '' : 's'} failed`;
  process.stderr.write(`replay: done: ${progress(read, positionals.length, pipeline)}${failed}; ${written(values)}\n`);
  return failures === 0 && refused.length === 0 ? 0 : 1;
}

/** Where the output went, or that it went nowhere and how to keep it. */
function written(values: { trajectories?: string | undefined; findings?: string | undefined; alarms?: string | undefined }): string {
  const parts = [
    values.trajectories === undefined ? undefined : `trajectories written to ${values.trajectories}`,
    values.findings === undefined ? undefined : `findings written to ${values.findings}`,
    values.findings === undefined || values.alarms === undefined ? undefined : `alarms written to ${values.alarms}`,
  ].filter((p) => p !== undefined);
  return parts.length === 0 ? 'nothing written: give --trajectories OUT.jsonl and/or --findings OUT.jsonl' : parts.join(', ');
}

function progress(done: number, total: number, pipeline: Pipeline): string {
  const c = pipeline.counts;
  return `${done}/${total} files, ${c.spansAccepted} spans (${c.spansRejected} rejected), ${c.trajectoriesClosed} trajectories, ${c.findingsEmitted} findings`;
}
