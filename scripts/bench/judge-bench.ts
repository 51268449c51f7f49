// Judges the in-repo TRAIL traces' windows with a real model under each answer protocol and
// writes the valid-answer rate and per-window latency into docs/benchmarks.md (the section
// between the judge-bench markers). Default: SmolLM2-135M-Instruct from scripts/setup/llama-server-env.sh
// on llama-cpp-python's server, started here.
//   npx node scripts/bench/judge-bench.ts [--base-url URL --model NAME --served-by TEXT] [--formats json_object,lines] [--keep-dir DIR] [--stdout]
// --keep-dir keeps the first format's ledger there (scripts/docs/judge-vs-labels.ts --data-dir replays it).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnswerFormat } from '../../src/judge/answer-format.ts';
import { loadTrailTraces } from '../../test/checks/trail-trajectories.ts';
import { resolveTrailCorpus } from '../../test/helpers/trail-corpus.ts';
import { judgeTrajectories, removeRun, type TrailJudgeRun } from '../../test/judge/judge-trail.ts';
import { startLlamaServer, type LlamaServer } from '../../test/judge/llama-server.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const DOC = join(ROOT, 'docs/benchmarks.md');
const BEGIN = '<!-- judge-bench:begin (scripts/bench/judge-bench.ts writes this section) -->';
const END = '<!-- judge-bench:end -->';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const formats = (arg('--formats') ?? 'json_object,lines').split(',') as AnswerFormat[];
const N_CTX = 8192;

let server: LlamaServer | undefined;
let baseUrl = arg('--base-url');
const model = arg('--model') ?? 'smollm2-135m-instruct-q4_1';
if (baseUrl === undefined) {
  const out = execFileSync('bash', [join(ROOT, 'scripts/setup/llama-server-env.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const line = (k: string) =>
    out
      .split('\n')
      .find((l) => l.startsWith(`${k}=`))!
      .slice(k.length + 1);
  server = await startLlamaServer(line('python'), { model: line('smollm2'), alias: model, nCtx: N_CTX, threads: 2 });
  baseUrl = server.baseUrl;
}
const traces = loadTrailTraces(resolveTrailCorpus({ want: 'in-repo' }));
const rows: string[] = [];
try {
  for (const answerFormat of formats) {
    const started = performance.now();
    const keep = answerFormat === formats[0] ? arg('--keep-dir') : undefined;
    if (keep !== undefined) mkdirSync(keep, { recursive: true });
    const run = await judgeTrajectories(
      traces.map((t) => t.trajectory),
      { baseUrl, model, answerFormat, contextTokens: N_CTX, dataDir: keep, timeoutMs: 280_000 },
    );
    rows.push(row(answerFormat, run, (performance.now() - started) / 1000));
    console.error(rows.at(-1));
    if (keep === undefined) await removeRun(run);
  }
} finally {
  await server?.stop();
}

function row(format: AnswerFormat, run: TrailJudgeRun, seconds: number): string {
  const replied = run.results.filter((r) => r.failure === null || r.failure.kind === 'bad-answer');
  const valid = run.results.filter((r) => r.failure === null);
  const questions = valid.length > 0 ? valid[0]!.answers.length : 8;
  const answers = replied.length * questions;
  const validAnswers = valid.length * questions;
  const failures =
    Object.entries(run.stats.failures)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  const refused =
    Object.entries(run.refused)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  const lat = run.calls.map((c) => c.seconds).sort((a, b) => a - b);
  const median = lat.length === 0 ? NaN : lat[Math.floor(lat.length / 2)]!;
  const prompt = valid.concat(replied).map((r) => r.receipt.promptTokens ?? 0);
  const rate = answers === 0 ? 'n/a' : `${((100 * validAnswers) / answers).toFixed(1)} %`;
  return `| \`${format}\` | ${run.results.length} | ${replied.length} | ${validAnswers} / ${answers} (${rate}) | ${failures} | ${refused} | ${median.toFixed(1)} s (max ${(lat.at(-1) ?? NaN).toFixed(1)} s) | ${Math.max(0, ...prompt)} | ${seconds.toFixed(0)} s |`;
}

const section = [
  BEGIN,
  '## The judge on a real small model (scripts/bench/judge-bench.ts)',
  '',
  `Model \`${model}\` at ${server === undefined ? `${baseUrl} (${arg('--served-by') ?? 'a server started outside the script'})` : `llama-cpp-python's server (n_ctx ${N_CTX}, 2 threads, \`nice\`)`}; the ${traces.length} in-repo TRAIL traces (test/fixtures/trail-dev/), every trajectory sampled, the default window policy (its fallback on: a window over a cap or the context is judged as the next smaller kind, \`windowPolicy.config.fallback\`), \`client.contextTokens\` ${N_CTX} (the server's \`n_ctx\`). A window's answers are valid only all together (a reply is refused whole), so the valid-answer figure counts 8 per window whose reply parsed, over 8 per window that got a reply. Latency is per judged window, prompt evaluation included, on 2 cores shared with other work.`,
  '',
  '| protocol | windows judged | replies | valid answers | failures | windows refused | latency per window (median) | largest prompt (tokens) | run |',
  '|---|---|---|---|---|---|---|---|---|',
  ...rows,
  '',
  END,
].join('\n');
if (process.argv.includes('--stdout')) console.log(section);
else {
  const doc = readFileSync(DOC, 'utf8');
  const at = doc.indexOf(BEGIN);
  writeFileSync(DOC, at < 0 ? `${doc.trimEnd()}\n\n${section}\n` : `${doc.slice(0, at)}${section}${doc.slice(doc.indexOf(END) + END.length)}`);
}
