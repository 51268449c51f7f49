/**
 * The framework matrix's harness: a real `trajwatch serve`, the stand-in model (a stand-in
 * for an LLM endpoint, which cannot run here), a recording pass-through in front of serve,
 * and one scenario process per framework. It evaluates what serve wrote against the
 * scenario's script into one row of the matrix (see {@link evaluate}).
 */
import { spawn } from 'node:child_process';
import { cp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeOtlpProto } from '../../src/ingest/otlp/proto-decode.ts';
import type { AttrValue, Span } from '../../src/ingest/span.ts';
import type { StepRow } from '../clients/harness.ts';
import { startServe } from '../helpers/serve.ts';
import { type Recorded, startRecordingProxy } from './recording-proxy.ts';
import { type ManifestRow, unreadConventionCells } from './unread-row.ts';
import { ORDER_ERROR_MESSAGE, ORDER_ERROR_TYPE, startStandInModel, TURN_1, TURN_2, WEATHER_TEXT } from './stand-in-model.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
/** Where each run's raw export requests and serve's output files are kept. */
export const CAPTURES_DIR = join(ROOT, '.cache/framework-captures');
/** One JSON row per framework, read by scripts/docs/framework-matrix-doc.ts. */
export const ROWS_DIR = join(ROOT, '.cache/framework-matrix');

export interface FrameworkSpec {
  /** File-safe id: the scenario is `python/<script>.py`, the venv `.cache/frameworks/<venv>`. */
  id: string;
  /** The table's first column, e.g. `LangGraph + OpenInference`. */
  title: string;
  venv: string;
  script: string;
  /** Instrumentation, as a user would name it. */
  instrumentation: string;
  /** Packages whose pinned versions the table shows. */
  packages: string[];
  /** Extra environment for the scenario (semconv opt-ins, telemetry switches). */
  env?: Record<string, string>;
  /**
   * How the conversation is keyed: `session` — the scenario sets the framework's documented
   * session id, which must be the one trajectory key; `none` — the framework has no session
   * mechanism (the reason says why), both turns must still land in one trajectory.
   */
  session: { kind: 'session' } | { kind: 'none'; reason: string };
  /**
   * Set when the instrumentation makes no tool spans (tools are the app's own code): the calls
   * exist only in the llm steps' messages. Then args, repetition and failure cannot be read
   * from tool steps; what is asserted instead is that trajwatch records every scripted call as
   * a capture gap (`tool-call-not-captured`), so no absence is claimed over them.
   */
  noToolSpans?: string;
  /**
   * Set when the instrumentation writes its tool and model spans in a convention trajwatch
   * does not read (the text says whose): then no tool step, args, repetition or failure can be
   * read, and what is asserted instead is that every tool span of the capture is an
   * `unread-convention` capture gap and the manifest claims no tool absence (`unread-row.ts`).
   */
  unreadConvention?: string;
}

/** What {@link evaluate} reads of a spec: the same for a Python scenario process and a JS scenario run in-process. */
export type MatrixSpec = Pick<FrameworkSpec, 'id' | 'title' | 'instrumentation' | 'session' | 'noToolSpans' | 'unreadConvention'>;

export const COLUMNS = ['session', 'toolNames', 'args', 'repetition', 'failure', 'falseFindings'] as const;
export type Column = (typeof COLUMNS)[number];

export interface Cell {
  /** `yes`: as expected; `no`: differs (a failure); `n/a`: nothing to check (the detail says why). */
  status: 'yes' | 'no' | 'n/a';
  detail: string;
}

export interface MatrixRow {
  id: string;
  title: string;
  instrumentation: string;
  versions: Record<string, string>;
  sessionKind: FrameworkSpec['session']['kind'];
  cells: Record<Column, Cell>;
  /** What went wrong, one line each; empty when the row is as expected. */
  problems: string[];
  exportStatuses: Record<string, number[]>;
  scenarioOutput: string;
}

/** One finding as written to findings.jsonl; only the fields the evaluation reads. */
export interface FindingRow {
  finding_id: string;
  area: string;
  claim: string;
  subject: { trajectory_key: string; revision: number };
  code_eval_hits?: { pattern: string; anchor: string; detail: string }[];
  observation?: { kind: string; tool_name?: string; count?: number; attempts?: { span_id: string }[] };
}

export interface TrajectoryFileRow {
  key: string;
  revision: number;
  complete: boolean;
  incompleteReasons: string[];
  closedBy: string;
  steps: StepRow[];
  captureGaps?: { reason: string; spanIds: string[]; toolNames?: string[] }[];
}

const SCENARIO_TIMEOUT_MS = 240_000;
/** Five times serve's quiet period (200 ms in the test config). */
const SETTLED_MS = 1_000;

/** Runs one framework's scenario end to end and evaluates it into a row (also written to {@link ROWS_DIR}). */
export async function runFramework(spec: FrameworkSpec, python: string): Promise<MatrixRow> {
  const captureDir = join(CAPTURES_DIR, spec.id);
  await rm(captureDir, { recursive: true, force: true });
  const rawDir = join(captureDir, 'otlp');
  const serve = await startServe({ receiver: { otlpGrpc: '127.0.0.1:0' } });
  const model = await startStandInModel();
  const proxy = await startRecordingProxy(serve.url, rawDir);
  const sessionId = `matrix-${spec.id}-session`;
  let output = '';
  let exitCode: number | null = null;
  try {
    ({ output, exitCode } = await runScenario(python, join(ROOT, 'test/frameworks/python', `${spec.script}.py`), {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'sk-stand-in-not-a-key',
      // LlamaIndex's OpenAI class reads its own variable name.
      OPENAI_API_BASE: model.baseUrl,
      OTEL_EXPORTER_OTLP_ENDPOINT: proxy.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_SERVICE_NAME: `matrix-${spec.id}`,
      OTEL_METRICS_EXPORTER: 'none',
      MATRIX_SESSION_ID: sessionId,
      MATRIX_TURN_1: TURN_1,
      MATRIX_TURN_2: TURN_2,
      MATRIX_WEATHER_TEXT: WEATHER_TEXT,
      MATRIX_ORDER_ERROR_TYPE: ORDER_ERROR_TYPE,
      MATRIX_ORDER_ERROR_MESSAGE: ORDER_ERROR_MESSAGE,
      ...spec.env,
    }));
    // Trajectories close by themselves (quiet after the root span), as in a real deployment,
    // before serve is stopped; a trajectory closed by the shutdown is reported below.
    if (exitCode === 0) await settled(join(serve.dataDir, 'trajectories.jsonl'));
  } finally {
    await proxy.close();
    await model.close();
    await serve.stop();
  }
  await writeFile(join(captureDir, 'scenario-output.txt'), output);
  await writeFile(join(captureDir, 'serve-output.txt'), serve.output());
  await writeFile(join(captureDir, 'model-requests.json'), JSON.stringify(model.requests, null, 1));
  for (const f of ['trajectories.jsonl', 'findings.jsonl']) await cp(join(serve.dataDir, f), join(captureDir, f)).catch(() => {});
  if (exitCode !== 0) throw new Error(`${spec.id} scenario exited ${exitCode}:\n${output}`);

  const trajectories = latestRevisions(await readJsonl<TrajectoryFileRow>(join(serve.dataDir, 'trajectories.jsonl')));
  const findings = await readFindings(serve.dataDir);
  const manifests = await readManifests(serve.dataDir);
  const raw = rawSpans(proxy.recorded, proxy.bodies);
  await writeFile(
    join(captureDir, 'spans.json'),
    JSON.stringify(raw.spans, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 1),
  );
  const logBodies = proxy.bodies.filter((_, i) => proxy.recorded[i]!.path.endsWith('/logs'));
  const row: MatrixRow = {
    ...evaluate(spec, { sessionId, trajectories, findings, raw, logBodies, manifests }),
    versions: await pinnedVersions(spec),
    exportStatuses: statuses(proxy.recorded),
    scenarioOutput: output.trim().split('\n').slice(-4).join('\n'),
  };
  await mkdir(ROWS_DIR, { recursive: true });
  await writeFile(join(ROWS_DIR, `${spec.id}.json`), JSON.stringify(row, null, 2) + '\n');
  return row;
}

/** Waits (bounded) until the file exists and has not grown for {@link SETTLED_MS}. */
async function settled(path: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  let size = -1;
  let since = Date.now();
  while (Date.now() < deadline) {
    const now = await stat(path).then(
      (s) => s.size,
      () => -1,
    );
    if (now !== size) {
      size = now;
      since = Date.now();
    } else if (size > 0 && Date.now() - since >= SETTLED_MS) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function runScenario(python: string, script: string, env: Record<string, string>): Promise<{ output: string; exitCode: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [script], { env, cwd: join(ROOT, 'test/frameworks/python'), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), SCENARIO_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ output, exitCode: code });
    });
  });
}

export async function readJsonl<T>(path: string): Promise<T[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

/**
 * The findings serve wrote, each id once. The findings log also holds one analysis manifest
 * per trajectory revision (`record_kind: "analysis-manifest"`): those are not findings.
 */
export async function readFindings(dataDir: string): Promise<FindingRow[]> {
  const rows = await readJsonl<FindingRow & { record_kind?: string }>(join(dataDir, 'findings.jsonl'));
  return dedupe(rows.filter((r) => r.record_kind === undefined));
}

/** The analysis manifests serve wrote, the latest revision per trajectory key. */
export async function readManifests(dataDir: string): Promise<ManifestRow[]> {
  const rows = await readJsonl<ManifestRow & { record_kind?: string }>(join(dataDir, 'findings.jsonl'));
  const byKey = new Map<string, ManifestRow>();
  for (const r of rows) {
    if (r.record_kind !== 'analysis-manifest') continue;
    const had = byKey.get(r.subject.trajectory_key);
    if (had === undefined || r.subject.revision >= had.subject.revision) byKey.set(r.subject.trajectory_key, r);
  }
  return [...byKey.values()];
}

export function latestRevisions<T extends TrajectoryFileRow>(rows: T[]): T[] {
  const byKey = new Map<string, T>();
  for (const r of rows) {
    const had = byKey.get(r.key);
    if (had === undefined || r.revision >= had.revision) byKey.set(r.key, r);
  }
  return [...byKey.values()];
}

/** Findings are written once per trajectory revision they hold for; one id is one claim. */
export function dedupe(rows: FindingRow[]): FindingRow[] {
  const byId = new Map<string, FindingRow>();
  for (const r of rows) byId.set(r.finding_id, r);
  return [...byId.values()];
}

export function statuses(recorded: Recorded[]): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const r of recorded) (out[r.path] ??= []).push(r.status);
  return out;
}

async function pinnedVersions(spec: FrameworkSpec): Promise<Record<string, string>> {
  const pins = await readFile(join(ROOT, 'test/frameworks/python/requirements', `${spec.venv}.txt`), 'utf8');
  const out: Record<string, string> = {};
  for (const p of spec.packages) {
    const m = new RegExp(`^${p.replace(/[-_.]/g, '[-_.]')}==(\\S+)`, 'im').exec(pins);
    out[p] = m?.[1] ?? '?';
  }
  return out;
}

/** A tool span as the framework's own convention marks it, read from the raw export (not from trajwatch's steps). */
export interface RawToolSpan {
  spanId: string;
  name: string;
  start: bigint;
}

export interface RawCapture {
  spans: Span[];
  tools: RawToolSpan[];
}

export function rawSpans(recorded: Recorded[], bodies: Buffer[]): RawCapture {
  const spans: Span[] = [];
  recorded.forEach((r, i) => {
    if (!r.path.endsWith('/traces') || r.contentType.includes('json')) return;
    const decoded = decodeOtlpProto(bodies[i]!);
    if (decoded instanceof Error) throw new Error(`capture ${r.file} does not decode: ${decoded.message}`);
    spans.push(...decoded.spans);
  });
  return captureOf(spans);
}

/** The tool spans among `spans`, by the framework's own convention, in start order. */
export function captureOf(spans: Span[]): RawCapture {
  const tools: RawToolSpan[] = [];
  for (const s of spans) {
    const a = s.attributes;
    const isTool =
      a['openinference.span.kind'] === 'TOOL' ||
      a['gen_ai.operation.name'] === 'execute_tool' ||
      a['traceloop.span.kind'] === 'tool' ||
      a['ai.operationId'] === 'ai.toolCall' ||
      // MLflow writes every attribute as JSON text: its span type is `"TOOL"`, quotes included.
      a['mlflow.spanType'] === '"TOOL"' ||
      a['langfuse.observation.type'] === 'tool';
    if (!isTool) continue;
    const name = str(a['tool.name']) ?? str(a['gen_ai.tool.name']) ?? str(a['traceloop.entity.name']) ?? str(a['ai.toolCall.name']) ?? s.name;
    tools.push({ spanId: s.spanId, name, start: s.startTimeUnixNano });
  }
  tools.sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0));
  return { spans, tools };
}

function str(v: AttrValue | undefined): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The calls the stand-in model makes, in order: what each framework's tool steps must show. */
const SCRIPT = [
  { tool: 'get_weather', args: { city: 'Paris' } },
  { tool: 'get_weather', args: { city: 'Paris' } },
  { tool: 'lookup_order', args: { order_id: '42' } },
  { tool: 'get_weather', args: { city: 'Rome' } },
] as const;

export interface Evidence {
  sessionId: string;
  trajectories: TrajectoryFileRow[];
  findings: FindingRow[];
  raw: RawCapture;
  logBodies: Buffer[];
  /** The latest analysis manifest per trajectory key (read by the unread-convention rows). */
  manifests?: ManifestRow[];
}

/**
 * The matrix's assertions, each a cell:
 * - session: one trajectory key for both turns (the session id where the framework has one);
 * - toolNames: every tool span (by the framework's own convention) is a tool step of that name,
 *   and the script's four calls are there;
 * - args: each scripted call's step has the call's parsed arguments, wherever the capture holds
 *   the structured arguments at all;
 * - repetition: a tool-repetition finding for get_weather, count 2, over the two Paris calls;
 * - failure: an L0 `error-output` finding anchored at the lookup_order step;
 * - falseFindings: nothing else. A `fault-passthrough` finding anchored at that same step,
 *   which claims the failure had no later success, is the same failure; one claiming the
 *   error "reappears in" a later output is false (the stand-in's final text does not quote it).
 */
export function evaluate(spec: MatrixSpec, ev: Evidence): Omit<MatrixRow, 'versions' | 'exportStatuses' | 'scenarioOutput'> {
  const cells = {} as Record<Column, Cell>;
  const steps = new Map<string, { step: StepRow; key: string }>();
  for (const t of ev.trajectories) for (const s of t.steps) steps.set(s.id, { step: s, key: t.key });

  // session
  // A trace id as key differs on every run: named by what it is, so the doc stays stable.
  const named = (t: TrajectoryFileRow) => `${/^[0-9a-f]{32}$/.test(t.key) ? 'a trace id' : `"${t.key}"`} (${t.steps.length} steps)`;
  // A trajectory of `other` steps only holds no turn (OpenLIT's `create_agent` span, made when
  // the graph is compiled, before the conversation): named apart, not counted as a key. Steps
  // in an unread convention are `other` too, yet hold the turn: an unread-convention gap counts.
  const turns = ev.trajectories.filter(
    (t) => t.steps.length === 0 || t.steps.some((s) => s.kind !== 'other') || (t.captureGaps ?? []).some((g) => g.reason === 'unread-convention'),
  );
  const apart = ev.trajectories.filter((t) => !turns.includes(t));
  const keys = turns.map(named);
  const besides = apart.length === 0 ? '' : `; apart, of other steps only: ${apart.map(named).join(', ')}`;
  if (spec.session.kind === 'session') {
    const ok = turns.length === 1 && turns[0]!.key === ev.sessionId;
    cells.session = {
      status: ok ? 'yes' : 'no',
      detail: (ok ? `key = session id` : `want one key "${ev.sessionId}", got ${keys.join(', ') || 'none'}`) + besides,
    };
  } else {
    const ok = turns.length === 1;
    cells.session = {
      status: ok ? 'yes' : 'no',
      detail: (ok ? `one key (no session id: ${spec.session.reason})` : `want one key, got ${keys.join(', ') || 'none'}`) + besides,
    };
  }

  // toolNames: raw tool spans ↔ steps
  const scripted = ev.raw.tools.filter((t) => SCRIPT.some((c) => c.tool === t.name));
  const nameProblems: string[] = [];
  for (const t of ev.raw.tools) {
    const s = steps.get(t.spanId)?.step;
    if (s === undefined) nameProblems.push(`tool span ${t.name} ${t.spanId} is no step`);
    else if (s.kind !== 'tool' || s.toolName !== t.name)
      nameProblems.push(`tool span ${t.name} ${t.spanId} is step kind=${s.kind} toolName=${s.toolName ?? '-'}`);
  }
  const wantCounts = `get_weather×3, lookup_order×1`;
  const gotCounts = `get_weather×${scripted.filter((t) => t.name === 'get_weather').length}, lookup_order×${scripted.filter((t) => t.name === 'lookup_order').length}`;
  if (ev.raw.tools.length === 0) {
    cells.toolNames = { status: 'n/a', detail: 'the instrumentation exports no tool spans' };
  } else {
    if (gotCounts !== wantCounts) nameProblems.push(`tool spans ${gotCounts}, want ${wantCounts}`);
    cells.toolNames = {
      status: nameProblems.length === 0 ? 'yes' : 'no',
      detail: nameProblems.length === 0 ? `${ev.raw.tools.length} tool spans, each a named tool step` : nameProblems.join('; '),
    };
  }

  // args: the scripted calls' tool steps, in start order, against the script
  // Log records are not decoded here (trajwatch does not read them yet): their protobuf holds
  // the arguments' JSON text as it is, so the member names show whether they carry any.
  const inLogs = ev.logBodies.some((b) => b.includes('"city"') || b.includes('"order_id"'));
  const argsCaptured = holdsStructuredArgs(ev.raw.spans) || inLogs;
  const toolSteps = scripted.map((t) => steps.get(t.spanId)?.step).filter((s): s is StepRow => s !== undefined);
  const argProblems: string[] = [];
  const byTool = (name: string) => toolSteps.filter((s) => s.toolName === name);
  for (const name of ['get_weather', 'lookup_order']) {
    const want = SCRIPT.filter((c) => c.tool === name).map((c) => c.args);
    const got = byTool(name).map((s) => s.args?.parsed);
    want.forEach((w, i) => {
      if (JSON.stringify(got[i]) !== JSON.stringify(w)) {
        const s = byTool(name)[i];
        argProblems.push(
          `${name}#${i + 1} args ${s?.args === undefined ? 'absent' : `parsed=${JSON.stringify(s.args.parsed)} raw=${JSON.stringify(s.args.raw)}`}, want ${JSON.stringify(w)}`,
        );
      }
    });
  }
  if (!argsCaptured) cells.args = { status: 'n/a', detail: 'the capture holds no structured arguments' };
  else if (toolSteps.length === 0)
    cells.args = { status: 'no', detail: `structured arguments are in the capture${inLogs ? ' (log records)' : ''}, but no tool step carries them` };
  else
    cells.args = {
      status: argProblems.length === 0 ? 'yes' : 'no',
      detail: argProblems.length === 0 ? 'every call parsed as scripted' : argProblems.join('; '),
    };

  // findings
  const paris = scripted
    .filter((t) => t.name === 'get_weather')
    .slice(0, 2)
    .map((t) => t.spanId)
    .sort();
  const order = scripted.find((t) => t.name === 'lookup_order')?.spanId;
  const expectedRepetition = (f: FindingRow) =>
    f.observation?.kind === 'tool-repetition' &&
    f.observation.tool_name === 'get_weather' &&
    f.observation.count === 2 &&
    JSON.stringify((f.observation.attempts ?? []).map((a) => a.span_id).sort()) === JSON.stringify(paris);
  const anchoredAtOrder = (f: FindingRow, pattern: string) =>
    order !== undefined && (f.code_eval_hits ?? []).some((h) => h.pattern === pattern && h.anchor === order);
  const expectedFailure = (f: FindingRow) => anchoredAtOrder(f, 'error-output');
  const allowedPassthrough = (f: FindingRow) =>
    anchoredAtOrder(f, 'fault-passthrough') && !/reappears/i.test(f.claim) && (f.code_eval_hits ?? []).every((h) => !/reappears/i.test(h.detail));

  const repetitions = ev.findings.filter(expectedRepetition);
  cells.repetition =
    repetitions.length > 0
      ? { status: 'yes', detail: 'get_weather ×2 over the Paris calls' }
      : { status: 'no', detail: `none; repetition findings: ${describeAll(ev.findings.filter((f) => f.observation?.kind === 'tool-repetition'))}` };
  const failures = ev.findings.filter(expectedFailure);
  cells.failure =
    failures.length > 0
      ? { status: 'yes', detail: 'error-output at lookup_order' }
      : { status: 'no', detail: order === undefined ? 'no lookup_order tool span to anchor at' : `no error-output at lookup_order ${order}` };
  const falses = ev.findings.filter((f) => !expectedRepetition(f) && !expectedFailure(f) && !allowedPassthrough(f));
  cells.falseFindings = falses.length === 0 ? { status: 'yes', detail: 'none' } : { status: 'no', detail: describeAll(falses, steps) };

  const problems: string[] = [];
  for (const t of ev.trajectories) {
    if (!t.complete || t.closedBy === 'shutdown')
      problems.push(`capture: trajectory ${t.key} closed by ${t.closedBy}, complete=${t.complete} ${t.incompleteReasons.join(', ')}`);
  }
  if (spec.unreadConvention !== undefined) Object.assign(cells, unreadConventionCells(spec.unreadConvention, ev));
  if (spec.noToolSpans !== undefined) {
    // No tool spans: the calls can only be seen as requests in the llm messages. What must hold
    // is that trajwatch says so (a capture gap naming each scripted tool), never claims absence.
    const gapTools = new Set(
      ev.trajectories.flatMap((t) => (t.captureGaps ?? []).filter((g) => g.reason === 'tool-call-not-captured').flatMap((g) => g.toolNames ?? [])),
    );
    const missing = ['get_weather', 'lookup_order'].filter((name) => !gapTools.has(name));
    const cell: Cell =
      missing.length === 0
        ? { status: 'n/a', detail: `${spec.noToolSpans}; every scripted call is a capture gap (tool-call-not-captured)` }
        : { status: 'no', detail: `no tool spans, and no tool-call-not-captured gap names ${missing.join(', ')}` };
    for (const c of ['args', 'repetition', 'failure'] as const) cells[c] = cell;
  }
  for (const c of COLUMNS) {
    const cell = cells[c];
    if (cell.status === 'no') problems.push(`${c}: ${cell.detail}`);
  }
  return { id: spec.id, title: spec.title, instrumentation: spec.instrumentation, sessionKind: spec.session.kind, cells, problems };
}

function describeAll(fs: FindingRow[], steps?: Map<string, { step: StepRow; key: string }>): string {
  if (fs.length === 0) return 'none';
  return fs
    .map((f) => {
      const anchors = (f.code_eval_hits ?? []).map((h) => {
        const s = steps?.get(h.anchor)?.step;
        return `${h.pattern}@${s === undefined ? h.anchor : `${s.kind}:${s.toolName ?? s.name}`}`;
      });
      const what = f.observation?.kind === 'tool-repetition' ? `repetition ${f.observation.tool_name}×${f.observation.count}` : anchors.join(',') || f.area;
      return `[${what}] ${f.claim}`;
    })
    .join(' | ');
}

/**
 * Whether any span attribute or event attribute holds the scripted calls' arguments as a
 * structure: a JSON object (or a JSON text of one, at any depth) with a `city` or `order_id`
 * member. A plain `"Paris"` is not structured.
 */
function holdsStructuredArgs(spans: Span[]): boolean {
  const seen = (v: unknown, depth: number): boolean => {
    if (depth > 8) return false;
    if (typeof v === 'string') {
      const t = v.trim();
      if (!(t.startsWith('{') || t.startsWith('['))) return false;
      try {
        return seen(JSON.parse(t), depth + 1);
      } catch {
        return false;
      }
    }
    if (Array.isArray(v)) return v.some((x) => seen(x, depth + 1));
    if (typeof v === 'object' && v !== null) {
      if ('city' in v || 'order_id' in v) return true;
      return Object.values(v).some((x) => seen(x, depth + 1));
    }
    return false;
  };
  for (const s of spans) {
    for (const [k, v] of Object.entries(s.attributes)) if (/arguments|parameters|input|args|tool_call/i.test(k) && seen(v, 0)) return true;
    for (const e of s.events) for (const v of Object.values(e.attributes)) if (seen(v, 0)) return true;
  }
  return false;
}
