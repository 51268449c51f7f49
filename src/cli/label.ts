import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { ConfigError, UsageError } from '../errors.ts';
import { createAuthCheck } from '../ingest/otlp/auth.ts';
import { underDataDir } from '../judge/config.ts';
import { GoldStore } from '../calibration/gold-store.ts';
import { LabelData } from '../calibration/label/label-data.ts';
import { startLabelServer } from '../calibration/label/label-server.ts';
import { allowedHostNames } from '../calibration/label/request-origin.ts';
import { LEDGER_FILE } from '../judge/ledger/ledger.ts';
import { parseFlags } from './flags.ts';
import { addressInUseLine } from './address-in-use.ts';
import { GOLD_FILE } from './judge-inputs.ts';
import { resolveConfig } from './resolve-config.ts';
import { lookUpTrajectory } from './trajectory-log.ts';
import { trajectoryPageView } from './trajectory-timeline.ts';
import { restrictCreatedFiles } from '../core/private-files.ts';
import type { Config } from '../config-schema.ts';
import { dataDirPaths } from '../core/data-dir.ts';

export { GOLD_FILE } from './judge-inputs.ts';

export const LABEL_HELP = `Usage: trajwatch label [options]

Serves a labeling page for the data directory of a running or past 'trajwatch serve': the
judged windows held for labeling (judge.labelWindows), each window's events exactly as the
judge saw them (redacted), one question at a time with its options and the window's event
ids for the supporting event. Each label is appended, with the labeler id and time, to the
gold file; the judge's answer stays hidden until the label is recorded (blind), and a review
shows agreement, disagreements and kappa so far (the same computation as 'trajwatch
calibrate'). Calibrate from the gold file with:
  trajwatch calibrate --data-dir <dataDir>

Each trajectory is also shown as a timeline at /trajectories/KEY (KEY: its key, a unique
prefix, or one of its trace ids), read from the data directory's trajectories.jsonl and
findings.jsonl as 'trajwatch show' reads them: steps nested by parent with their durations and
content, each finding marked under the steps its evidence names, the manifest's claims and the
capture gaps.

The page is keyboard-first (press ? or open Keys), needs no build step and loads nothing from
another host. The API asks for the same token as the receivers when receiver.auth is set.
Every request must name an allowed host (Host header: the listen address, the loopback names
on loopback, and each --allowed-host), so a page under another name (DNS rebinding) can read
nothing; every write must carry the Origin of the server it is sent to (a browser sends it).

Options:
  --config FILE      configuration (as for serve): dataDir, judge, receiver.auth
  --data-dir DIR     data directory (overrides the configuration)
  --host HOST        listen address (default 127.0.0.1; another address needs receiver.auth)
  --port N           listen port (default 4320; 0: any free port)
  --allowed-host H   also answer to host name H (a reverse proxy's, say); repeatable
  --gold FILE        gold file to append to (default <dataDir>/${GOLD_FILE})
  --show-judge       show the judge's answers before a label is recorded (not blind)
  --help             this text

Prints the page's address, then serves until interrupted (SIGINT/SIGTERM).
Exit status: 0 after a clean stop; 1 on invalid configuration or when the address is in use; 2 on a
usage error (a flag or its value) or a malformed gold file.
`;

export async function labelCommand(args: string[], signal?: AbortSignal, onListening?: (url: string) => void): Promise<number> {
  // Raw telemetry (prompts, tool payloads) is its owner's alone: files 0600, directories 0700.
  restrictCreatedFiles();
  const flags = parseFlags(args, LABEL_HELP, { strings: ['config', 'data-dir', 'host', 'port', 'gold'], repeated: ['allowed-host'], booleans: ['show-judge'] });
  if (flags === undefined) return 0;
  const { values } = flags;
  const config = await resolveConfig(values.config, [{ path: ['dataDir'], value: values['data-dir'], flag: '--data-dir' }]);
  const host = values.host ?? '127.0.0.1';
  const port = values.port === undefined ? 4320 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port: expected a port from 0 to 65535, got "${values.port}"`);
  const auth = config.receiver.auth;
  if (auth === undefined && !isLoopback(host)) {
    throw new ConfigError(
      [`--host: ${host} is not a loopback address; the labeling page writes gold labels, so another address needs receiver.auth`],
      'command line',
    );
  }
  const badNames = (values['allowed-host'] ?? []).filter((h) => !/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)$/.test(h));
  if (badNames.length > 0)
    throw new ConfigError(
      badNames.map((h) => `--allowed-host: ${JSON.stringify(h)} is not a host name (no scheme, port or path)`),
      'command line',
    );
  const allowedHosts = allowedHostNames(host, values['allowed-host']);
  if (allowedHosts.length === 0) {
    throw new ConfigError(
      [`--host: ${host} is reached under no name of its own; name each host name the page is opened under with --allowed-host`],
      'command line',
    );
  }
  const check = createAuthCheck(auth);
  const gold = await GoldStore.open(values.gold ?? dataDirPaths(config.dataDir).gold);
  const data = new LabelData(
    { ledger: join(underDataDir(config.dataDir, config.judge.ledgerDir), LEDGER_FILE), windows: underDataDir(config.dataDir, config.judge.labelWindows.dir) },
    gold,
    config.judge.decision.minKappa,
  );
  const windowsDir = underDataDir(config.dataDir, config.judge.labelWindows.dir);
  const emptyReason = whyNoWindows(config.judge, values.config ?? (process.env.TRAJWATCH_CONFIG || undefined), windowsDir);
  if (!config.judge.enabled || !config.judge.labelWindows.enabled) process.stderr.write(`trajwatch label: ${emptyReason}\n`);
  let started: Awaited<ReturnType<typeof startLabelServer>>;
  try {
    started = await startLabelServer(
      {
        data,
        auth: check,
        authRequired: auth !== undefined,
        reveal: values['show-judge'] === true,
        allowedHosts,
        emptyReason,
        trajectory: trajectoryPages(config.dataDir),
      },
      host,
      port,
    );
  } catch (err) {
    const line = addressInUseLine(err, [{ address: { host, port }, what: 'labeling page', move: '--port N (0: any free port) or --host HOST' }]);
    if (line === undefined) throw err;
    process.stderr.write(`trajwatch label: ${line}\n`);
    return 1;
  }
  const { server, url } = started;
  process.stdout.write(`trajwatch label: ${url} (gold file ${gold.path}${values['show-judge'] === true ? ', judge answers shown' : ', blind'})\n`);
  onListening?.(url);
  await new Promise<void>((resolve) => {
    const stop = () => server.close(() => resolve());
    if (signal !== undefined) signal.addEventListener('abort', stop, { once: true });
    else {
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    }
  });
  return 0;
}

/** Why the window list is empty, when it is: the judge off, its windows not kept, or nothing judged yet. */
function whyNoWindows(judge: Config['judge'], configPath: string | undefined, windowsDir: string): string {
  const where = configPath === undefined ? 'the embedded defaults (no --config)' : configPath;
  if (!judge.enabled) {
    return (
      `the judge is off (judge.enabled is false in ${where}): serve judges no window, so there is none to label. ` +
      'Turn it on in the configuration serve runs with: judge.enabled: true and judge.client { baseUrl, model } ' +
      '(an OpenAI-compatible endpoint; docs/decision-points.md); judged windows then appear here.'
    );
  }
  if (!judge.labelWindows.enabled) {
    return `judge.labelWindows.enabled is false in ${where}: serve judges windows but keeps none for labeling; set it to true (the default).`;
  }
  return `no judged window is held yet in ${windowsDir}: serve keeps each window it judges there. Is --data-dir the directory serve writes to, and has serve judged a window?`;
}

/** The trajectory page's data, read from the data directory's local logs as `trajwatch show` reads them (a trace id names its trajectory too). */
export function trajectoryPages(dataDir: string) {
  return async (key: string) => {
    const r = await lookUpTrajectory(resolve(dataDir), key, { byTraceId: true });
    if (r.kind === 'found') return { found: true as const, view: trajectoryPageView(r.trajectory, r.findings, r.manifest) };
    const why = r.kind === 'no-log' ? `no trajectory log at ${r.path}: serve (or replay --trajectories) writes it` : r.why;
    return { found: false as const, why };
  };
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
