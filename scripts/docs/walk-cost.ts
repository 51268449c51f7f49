// Regenerates the cost table of the layered walk in docs/decision-points.md (between the
// `walk-cost` markers): judge calls and tokens per trajectory for the walk (stopping rules on)
// against asking every layer (`judge.walk.stopEarly: false`), over the TRAIL dev traces of this
// checkout (test/helpers/trail-corpus.ts). No LLM runs here: the scripted Chat Completions
// server of the judge tests stands in for the judge, with a fixed script (below). The labels are
// not read. Run: node scripts/docs/walk-cost.ts [--stdout]
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { JudgeConfigSchema } from '../../src/judge/config.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import { loadTrailTraces } from '../../test/checks/trail-trajectories.ts';
import { trailCorpus } from '../../test/helpers/trail-corpus.ts';
import { completion, startScriptedServer, type ScriptedReply } from '../../test/judge/scripted-chat-server.ts';
import { installLayerCertificate, requestOf } from '../../test/judge/walk/walk-harness.ts';

const DOC = new URL('../../docs/decision-points.md', import.meta.url).pathname;
const BEGIN = '<!-- walk-cost:begin (scripts/docs/walk-cost.ts regenerates this part) -->';
const END = '<!-- walk-cost:end -->';
const CHECKS = checksConfigSchema.parse({});

/**
 * The stand-in judge. Trace questions: all "no". Layers: L1 and L2 "no" (pass); L3 "yes" when
 * the anchor event of its window has status error, else "no" (its verifier the same); L4 "no". So walks over clean
 * traces stop at L1 and walks over traces with fired candidates or failed tools descend. Usage:
 * prompt tokens = request bytes / 4 (rounded up), 8 completion tokens per answer line — an
 * estimate the stand-in reports, not a tokenizer's count.
 */
function script(body: Record<string, unknown>): ScriptedReply {
  const r = requestOf(body);
  const doc = JSON.parse((body.messages as { content: string }[])[1]!.content) as {
    window: { anchor_event?: string | null; events: { id: string; content: string }[] };
  };
  const anchor = doc.window.events.find((e) => e.id === doc.window.anchor_event);
  const failedAnchor = anchor !== undefined && (JSON.parse(anchor.content) as { status?: string }).status === 'error';
  const l3 = (id: string) => id === 'layer.l3-tool-output' || id === 'verify.layer.l3-tool-output';
  const letters = r.role === 'trace' ? Array(8).fill('B') : r.questionIds.map((id) => (l3(id) && failedAnchor ? 'A' : 'B'));
  const promptTokens = Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4);
  const usage = { prompt_tokens: promptTokens, completion_tokens: 8 * letters.length, total_tokens: promptTokens + 8 * letters.length };
  return {
    body: completion(
      letters.map((letter) => ({ letter, support: 'unresolved', p: 0.97 })),
      { usage },
    ),
  };
}

interface Cost {
  calls: number;
  tokens: number;
  earlyExit: boolean;
  engaged: string;
  verdicts: string;
}

async function measure(traces: readonly Trajectory[], stopEarly: boolean, certifyL3 = false): Promise<Map<string, Cost>> {
  const server = await startScriptedServer(script);
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-walk-cost-'));
  const cfg = JudgeConfigSchema.parse({
    enabled: true,
    client: { baseUrl: server.baseUrl, model: 'judge', backoffMs: 1, timeoutMs: 30_000 },
    sampling: { rate: 0 },
    budget: { callsPerMinute: 100_000, tokensPerDay: 1_000_000_000, maxQueuedWindows: 10_000 },
    walk: { enabled: true, stopEarly },
  });
  if (certifyL3) {
    // L3 and its verifier certified on event windows: L3's positive answers act, so each is verified.
    await installLayerCertificate(dataDir, cfg, 'L3', 'layer', ['event']);
    await installLayerCertificate(dataDir, cfg, 'L3', 'verifier', ['event']);
  }
  const findings: Finding[] = [];
  const dp = await DecisionPoints.open(dataDir, cfg, { checks: CHECKS, onFindings: (f) => findings.push(...f), onError: (e) => console.error(e) });
  for (const t of traces) await dp.consider(t, runChecks(t, CHECKS), []);
  await dp.drain();
  await dp.close();
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
  const out = new Map<string, Cost>();
  for (const f of findings) {
    if (f.area !== 'walk.summary') continue;
    const cost = (f.observation as unknown as { values: { cost: { calls: number; prompt_tokens: number | null; completion_tokens: number | null } } }).values
      .cost;
    // The stand-in always reports usage; an unknown count would make the table a lie, so it stops here.
    if (cost.prompt_tokens === null || cost.completion_tokens === null) throw new Error(`walk-cost: unknown token usage on ${f.subject.trajectory_key}`);
    out.set(f.subject.trajectory_key, {
      calls: cost.calls,
      tokens: cost.prompt_tokens + cost.completion_tokens,
      earlyExit: f.early_exit === 'L1',
      engaged: f.layers_engaged!.join(' '),
      verdicts: f.layer_verdicts!.map((v) => `${v.layer} ${v.verdict}`).join(', '),
    });
  }
  return out;
}

const table = (head: string[], rows: (string | number)[][]) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

async function main(): Promise<void> {
  const corpus = trailCorpus();
  const traces = loadTrailTraces(corpus).map((x) => x.trajectory);
  const walkCosts = await measure(traces, true);
  const every = await measure(traces, false);
  const verified = await measure(traces, true, true);
  const keys = traces.map((t) => t.key);
  const missing = keys.filter((k) => !walkCosts.has(k) || !every.has(k));
  if (missing.length > 0) throw new Error(`no walk summary for ${missing.join(', ')}`);
  const w = keys.map((k) => walkCosts.get(k)!);
  const e = keys.map((k) => every.get(k)!);
  const v = keys.map((k) => verified.get(k)!);
  const stopped = w.filter((c) => c.earlyExit).length;
  const sum = (cs: Cost[], f: (c: Cost) => number) => cs.reduce((a, c) => a + f(c), 0);
  const ratio = (a: number, b: number) => (b === 0 ? '—' : fmt(a / b));
  const summary = table(
    ['', 'walk (stopping rules)', 'every layer', 'walk / every layer', 'walk, L3 certified (verifier asked)'],
    [
      ['trajectories', keys.length, keys.length, '', keys.length],
      ['stopped after L1', stopped, 0, '', v.filter((c) => c.earlyExit).length],
      [
        'judge calls, total',
        sum(w, (c) => c.calls),
        sum(e, (c) => c.calls),
        ratio(
          sum(w, (c) => c.calls),
          sum(e, (c) => c.calls),
        ),
        sum(v, (c) => c.calls),
      ],
      ['judge calls per trajectory (mean)', fmt(mean(w.map((c) => c.calls))), fmt(mean(e.map((c) => c.calls))), '', fmt(mean(v.map((c) => c.calls)))],
      [
        'tokens, total',
        sum(w, (c) => c.tokens),
        sum(e, (c) => c.tokens),
        ratio(
          sum(w, (c) => c.tokens),
          sum(e, (c) => c.tokens),
        ),
        sum(v, (c) => c.tokens),
      ],
      [
        'tokens per trajectory (mean)',
        Math.round(mean(w.map((c) => c.tokens))),
        Math.round(mean(e.map((c) => c.tokens))),
        '',
        Math.round(mean(v.map((c) => c.tokens))),
      ],
    ],
  );
  const perTrace = table(
    ['trace', 'steps', 'walk: engaged', 'walk: calls', 'walk: tokens', 'every layer: calls', 'every layer: tokens', 'walk verdicts'],
    keys.map((k, i) => [k.slice(0, 8), traces[i]!.steps.length, w[i]!.engaged, w[i]!.calls, w[i]!.tokens, e[i]!.calls, e[i]!.tokens, w[i]!.verdicts]),
  );
  const text = [
    BEGIN,
    '',
    `Corpus: ${corpus.description}. Layer and verifier calls only (the trace questions cost the same in every column).`,
    'Stand-in judge script (`scripts/docs/walk-cost.ts`): L1, L2, L4 answer "no"; L3 (and its verifier) answer "yes" where the anchor',
    'step failed. In the first two columns no certificate is installed, so no answer acts and no verifier call is made; in the',
    'last, L3 and its verifier are certified on event windows, so every L3 "yes" acts and is verified. Tokens are what the stand-in reports:',
    'request bytes / 4 as prompt tokens plus 8 per answer line, an estimate and not a tokenizer count. Default window policy',
    '(`maxWindowsPerLayer` 2).',
    '',
    summary,
    '',
    perTrace,
    '',
    END,
  ].join('\n');
  if (process.argv.includes('--stdout')) {
    process.stdout.write(`${text}\n`);
    return;
  }
  const doc = readFileSync(DOC, 'utf8');
  const from = doc.indexOf(BEGIN);
  const to = doc.indexOf(END);
  if (from < 0 || to < 0) throw new Error(`${DOC}: the walk-cost markers are missing`);
  writeFileSync(DOC, doc.slice(0, from) + text + doc.slice(to + END.length));
}

await main();
