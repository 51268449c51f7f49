/**
 * The matrix's JavaScript rows: the same serve, stand-in model, recording proxy and
 * evaluation as the Python rows (../harness.ts), with the scenario run in the test process
 * (a JS framework is a library the test imports, not a process to spawn).
 */
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startServe, waitForLines } from '../../helpers/serve.ts';
import {
  CAPTURES_DIR,
  evaluate,
  latestRevisions,
  type MatrixRow,
  type MatrixSpec,
  rawSpans,
  readJsonl,
  ROWS_DIR,
  readFindings,
  statuses,
  type TrajectoryFileRow,
} from '../harness.ts';
import { startRecordingProxy } from '../recording-proxy.ts';
import { startStandInModel } from '../stand-in-model.ts';
import type { ScenarioOptions, ScenarioRun } from './scenario.ts';

export interface JsFrameworkSpec extends MatrixSpec {
  /** npm packages whose pinned versions (package.json devDependencies) the table shows. */
  packages: string[];
  run: (opts: ScenarioOptions) => Promise<ScenarioRun>;
}

const ROOT = new URL('../../../', import.meta.url).pathname;

/**
 * The pause between the two turns, longer than serve's quiet period (200 ms in the test
 * config): trajwatch closes the trajectory after turn 1, and turn 2 must reopen the same key,
 * as in a real session where the user takes a while to answer.
 */
const PAUSE_BETWEEN_TURNS_MS = 1_000;

/** How long serve may take to close the last turn's trajectory after the scenario returned. */
const SETTLE_TIMEOUT_MS = 15_000;

export interface JsRun {
  row: MatrixRow;
  answers: string[];
  /** The latest revision of each trajectory key. */
  trajectories: ClosedRow[];
}

/** A trajectories.jsonl row with how it was closed. */
type ClosedRow = TrajectoryFileRow & { complete: boolean; incompleteReasons: string[] };

/** Runs one JS framework's scenario end to end and evaluates it into a row (also written to ROWS_DIR). */
export async function runJsFramework(spec: JsFrameworkSpec): Promise<JsRun> {
  const captureDir = join(CAPTURES_DIR, spec.id);
  await rm(captureDir, { recursive: true, force: true });
  const serve = await startServe({ receiver: { otlpGrpc: '127.0.0.1:0' } });
  const model = await startStandInModel();
  const proxy = await startRecordingProxy(serve.url, join(captureDir, 'otlp'));
  const sessionId = `matrix-${spec.id}-session`;
  let run: ScenarioRun;
  try {
    run = await spec.run({
      otlpUrl: proxy.url,
      modelBaseUrl: model.baseUrl,
      sessionId,
      betweenTurns: () => new Promise((resolve) => setTimeout(resolve, PAUSE_BETWEEN_TURNS_MS)),
    });
    // Let serve close the last turn's trajectory itself (quiet period) before stopping it: a
    // trajectory closed by shutdown is incomplete, and checks that claim an absence (no later
    // success, no gate) stay silent on incomplete captures, so a false one would go unseen.
    await settled(join(serve.dataDir, 'trajectories.jsonl'), sentSpanIds(proxy));
  } finally {
    await proxy.close();
    await model.close();
    // SIGTERM drains serve: every open trajectory is closed and checked before it exits.
    await serve.stop();
    await writeFile(join(captureDir, 'serve-output.txt'), serve.output());
    await writeFile(join(captureDir, 'model-requests.json'), JSON.stringify(model.requests, null, 1));
    for (const f of ['trajectories.jsonl', 'findings.jsonl']) await cp(join(serve.dataDir, f), join(captureDir, f)).catch(() => {});
  }
  const output = run.answers.map((a, i) => `turn ${i + 1}: ${a}`).join('\n');
  await writeFile(join(captureDir, 'scenario-output.txt'), `${output}\n`);

  const trajectories = latestRevisions(await readJsonl<ClosedRow>(join(serve.dataDir, 'trajectories.jsonl')));
  const findings = await readFindings(serve.dataDir);
  const raw = rawSpans(proxy.recorded, proxy.bodies);
  const logBodies = proxy.bodies.filter((_, i) => proxy.recorded[i]!.path.endsWith('/logs'));
  const row: MatrixRow = {
    ...evaluate(spec, { sessionId, trajectories, findings, raw, logBodies }),
    versions: await pinnedVersions(spec.packages),
    exportStatuses: statuses(proxy.recorded),
    scenarioOutput: output,
  };
  await mkdir(ROWS_DIR, { recursive: true });
  await writeFile(join(ROWS_DIR, `${spec.id}.json`), JSON.stringify(row, null, 2) + '\n');
  return { row, answers: run.answers, trajectories };
}

function sentSpanIds(proxy: { recorded: { path: string }[]; bodies: Buffer[] }): Set<string> {
  return new Set(rawSpans(proxy.recorded as Parameters<typeof rawSpans>[0], proxy.bodies).spans.map((sp) => sp.spanId));
}

/**
 * Waits until complete revisions (closed by the quiet period, not by shutdown) hold every
 * span that was sent. On timeout it returns anyway: the evaluation then shows what is missing.
 */
async function settled(file: string, spanIds: Set<string>): Promise<void> {
  await waitForLines<ClosedRow>(
    file,
    (rows) => {
      const held = new Set<string>();
      for (const r of latestRevisions(rows)) if (r.complete) for (const st of r.steps) held.add(st.id);
      return [...spanIds].every((id) => held.has(id));
    },
    SETTLE_TIMEOUT_MS,
  ).catch(() => undefined);
}

/**
 * Exact pins from package.json's devDependencies. An alias (`"ai-v7": "npm:ai@7.0.173"`) is
 * shown under the package's real name.
 */
async function pinnedVersions(packages: string[]): Promise<Record<string, string>> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  const out: Record<string, string> = {};
  for (const p of packages) {
    const spec = pkg.devDependencies[p] ?? '?';
    const alias = /^npm:(@?[^@]+)@(.+)$/.exec(spec);
    if (alias === null) out[p] = spec;
    else out[alias[1]!] = alias[2]!;
  }
  return out;
}
