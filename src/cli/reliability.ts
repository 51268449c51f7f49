import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { readGold } from '../calibration/gold-store.ts';
import { LEDGER_FILE, readLedger } from '../judge/ledger/ledger.ts';
import { chartHeight, CHART_WIDTH, reliabilitySvg } from '../calibration/reliability-chart.ts';
import { reliability, type ReliabilityReport } from '../calibration/reliability.ts';
import { parseFlags } from './flags.ts';
import { GOLD_FILE, judgeFiles, missingInput } from './judge-inputs.ts';
import { svgToPng } from './rasterize.ts';
import { dataDirPaths } from '../core/data-dir.ts';

export const RELIABILITY_HELP = `Usage: trajwatch reliability [options]

Joins outcome labels (a gold file, as 'trajwatch label' writes it) to the decisions in the
judge's ledger and reports, per question and target: decisions, labeled, failed (kept in every
denominator), excluded (unsure) counts, the empirical curve of the judge's probability for its
answer against agreement with the labels (null below two labeled answers with probabilities),
and the accuracy and coverage at probability thresholds. The support choices are record-only:
listed apart, never on a curve. Layer and verifier questions are reported like trace questions
(a verifier's answers against the labels of the layer question it asks again); L4's gap kind
is marked record-only. Writes the curves as a PNG (drawn by headless Chromium).

Kappa (trajwatch calibrate) is label agreement, not probability reliability: a question can
hold a certificate and still have unreliable probabilities. Threshold tables are evidence for
an explicit policy revision, not tuning by themselves.

Options:
  --data-dir DIR   data directory (default ./data; env TRAJWATCH_DATA_DIR): ledger DIR/judge/${LEDGER_FILE},
                   gold DIR/${GOLD_FILE}
  --config FILE    configuration (as for serve): dataDir, judge.ledgerDir
  --ledger FILE    ledger to read
  --gold FILE      gold labels to read
  --png FILE       where the PNG goes (default DIR/judge/reliability.png)
  --svg FILE       also write the chart as SVG
  --no-png         write no PNG
  --json           print the report as JSON instead of tables
  --help           this text

Exit status: 0 when the report and the PNG were produced, 1 when the PNG could not be drawn (the
report is still printed) or when the ledger or the gold file is not there (named, with what
writes it; nothing is drawn), 2 on usage error, a corrupt ledger or a malformed gold file.
`;

export async function reliabilityCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, RELIABILITY_HELP, { strings: ['data-dir', 'config', 'ledger', 'gold', 'png', 'svg'], booleans: ['no-png', 'json'] });
  if (flags === undefined) return 0;
  const { values } = flags;
  const files = await judgeFiles(values['data-dir'], values.config);
  const dataDir = files.dataDir;
  const ledgerPath = resolve(values.ledger ?? files.ledger);
  const goldPath = resolve(values.gold ?? files.gold);
  // A curve over no ledger or no labels is an empty picture that reads as a result: refuse it.
  const missing = missingInput('ledger', ledgerPath) ?? missingInput('gold', goldPath);
  if (missing !== undefined) {
    process.stderr.write(`trajwatch reliability: ${missing}\n`);
    return 1;
  }
  const records = await readLedger(ledgerPath);
  const gold = await readGold(goldPath);
  const report = reliability(records, gold);
  const svg = reliabilitySvg(report);
  if (values.svg !== undefined) await writeFile(values.svg, svg);
  let png: string | null = null;
  let pngError: string | null = null;
  if (values['no-png'] !== true) {
    const out = resolve(values.png ?? dataDirPaths(dataDir).reliabilityPng);
    try {
      await mkdir(dirname(out), { recursive: true });
      await svgToPng(svg, CHART_WIDTH, chartHeight(report), out);
      png = out;
    } catch (err) {
      pngError = (err as Error).message;
    }
  }
  // The report is printed whatever happened to the picture; a PNG that could not be drawn fails the command after it.
  process.stdout.write(values.json === true ? JSON.stringify({ report, png }, null, 2) + '\n' : text(report, png));
  if (pngError !== null) {
    process.stderr.write(`trajwatch reliability: no PNG written: ${pngError}\n`);
    return 1;
  }
  return 0;
}

const f = (x: number | null, d = 3) => (x === null ? 'n/a' : x.toFixed(d));

/** The report as text tables. */
export function text(report: ReliabilityReport, png: string | null): string {
  const lines = [
    `decisions ${report.decisions} (failed calls ${report.failedCalls}), labeled ${report.labeledDecisions}, missing outcomes ${report.missingOutcomes}, conflicting gold ${report.conflictingGold}`,
    '',
  ];
  for (const q of report.questions) {
    const t = q.target;
    lines.push(
      `${t.questionId}@${t.questionVersion}${q.recordOnly ? ' (record-only: never routes, never certified)' : ''} layer=${t.windowKind ?? '-'} model=${t.requestedModel} served=${q.servedModels.join(',') || '-'}`,
    );
    lines.push(
      `  decisions ${q.decisions}, labeled ${q.labeled}, failed ${q.failed}, without probabilities ${q.withoutProbabilities}, excluded (unsure) ${q.excluded}, accuracy ${f(q.accuracy)}`,
    );
    if (q.labeled === 0) {
      lines.push('  no usable labels: curve null, no threshold table', '');
      continue;
    }
    if (q.curve === null) lines.push('  curve: null (fewer than two labeled answers with probabilities)');
    else {
      lines.push('  curve   bin        n   mean p  agree');
      for (const b of q.curve)
        lines.push(`          ${b.lo.toFixed(1)}–${b.hi.toFixed(1)}  ${String(b.n).padStart(4)}  ${b.meanProbability.toFixed(3)}  ${b.accuracy.toFixed(3)}`);
    }
    lines.push('  p ≥     above  correct  accuracy  coverage');
    for (const r of q.thresholds)
      lines.push(
        `  ${r.threshold.toFixed(2)}    ${String(r.above).padStart(5)}  ${String(r.correct).padStart(7)}  ${f(r.accuracy).padStart(8)}  ${f(r.coverage).padStart(8)}`,
      );
    lines.push('');
  }
  lines.push('record-only (support choices: no route, no certificate, not on a curve):');
  for (const s of report.recordOnlyQuestions) lines.push(`  ${s.questionId}: decisions ${s.decisions}, labeled ${s.labeled}, agreement ${f(s.agreement)}`);
  lines.push('', `caveat: ${report.caveat}`);
  if (png !== null) lines.push(`PNG written: ${png}`);
  return lines.join('\n') + '\n';
}
