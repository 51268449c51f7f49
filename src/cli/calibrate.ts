import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '../errors.ts';
import { calibrate, certificateFileName, certificateFor, GoldRowSchema, type CalibrationReport, type GoldRow } from '../judge/calibrate.ts';
import { MIN_KAPPA } from '../judge/decision-policy.ts';
import { LEDGER_FILE, readLedger } from '../judge/ledger.ts';
import { sha256Hex } from '../core/digest.ts';

export const CALIBRATE_HELP = `Usage: trajwatch calibrate --gold GOLD.jsonl [options]

Joins independent gold labels with the judge answers recorded in the decision ledger and
reports, per question and per target (question version, window policy, window kind, request
contract, evaluator, requested and served model): exact n, label sources, excluded gold (unsure/null), missing labels, missing
predictions, abstentions, confusion counts, agreement, Cohen's kappa with its 95 % interval
(the wider of the Fleiss-Cohen-Everitt large-sample interval and the Wilson interval of the
agreement; docs/decision-points.md) and every disagreement.
Writes a certificate for each question that qualifies (n > 0, the interval's lower bound >=
the minimum kappa, no missing predictions, a known served model, answers recorded with their
layer, request contract and evaluator bindings). When the lower bound is short, the report
estimates how many more labels would reach it if kappa and the label shares held. Record-only
questions (L4's gap kind) are reported, never certified. Each certificate qualifies its
window kind only. Install certificates by placing them in the judge's certificates directory;
they are read at start-up.

Gold rows, one JSON object per line:
  {"questionId": "evidence.unverified-completion", "windowId": "w1_...", "label": "yes", "source": "reviewer-a"}
  label: yes | no | unavailable | unsure | null   (unsure and null are exclusions, never "no")

Options:
  --gold FILE        gold rows (JSONL), required
  --ledger FILE      ledger to read (default ./data/judge/${LEDGER_FILE})
  --out DIR          where certificates are written (default ./data/judge/certificates)
  --min-kappa N      minimum kappa, at least ${MIN_KAPPA} (default ${MIN_KAPPA})
  --report FILE      also write the full report as JSON
  --dry-run          report only; write no certificate
  --json             print the report as JSON instead of a table
  --help             this text

Exit status: 0 when the report was produced, 1 on invalid gold or options, 2 on usage error.
`;

export async function calibrateCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      gold: { type: 'string' },
      ledger: { type: 'string' },
      out: { type: 'string' },
      'min-kappa': { type: 'string' },
      report: { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help === true) {
    process.stdout.write(CALIBRATE_HELP);
    return 0;
  }
  if (values.gold === undefined) {
    process.stderr.write(`calibrate: --gold is required\n\n${CALIBRATE_HELP}`);
    return 2;
  }
  const minKappa = values['min-kappa'] === undefined ? MIN_KAPPA : Number(values['min-kappa']);
  if (!Number.isFinite(minKappa) || minKappa < MIN_KAPPA || minKappa > 1) {
    throw new ConfigError([`--min-kappa: ${values['min-kappa']} must be a number from ${MIN_KAPPA} to 1`], 'command line');
  }
  const goldPath = resolve(values.gold);
  const ledgerPath = resolve(values.ledger ?? join('data', 'judge', LEDGER_FILE));
  const outDir = resolve(values.out ?? join('data', 'judge', 'certificates'));
  const goldText = await readFile(goldPath, 'utf8');
  const gold = parseGold(goldText, goldPath);
  const ledgerText = await readFile(ledgerPath, 'utf8').catch(() => '');
  const records = await readLedger(ledgerPath);
  const report = calibrate(gold, records, minKappa);
  const written: string[] = [];
  if (values['dry-run'] !== true) {
    const evidence = [
      { kind: 'artifact' as const, uri: `file:${goldPath}`, excerpt: `sha256:${sha256Hex(goldText)}` },
      { kind: 'artifact' as const, uri: `file:${ledgerPath}`, excerpt: `sha256:${sha256Hex(ledgerText)}` },
    ];
    const issuedAt = new Date().toISOString();
    for (const q of report.questions) {
      if (!q.qualifies) continue;
      await mkdir(outDir, { recursive: true });
      const path = join(outDir, certificateFileName(q.target));
      await writeFile(path, JSON.stringify(certificateFor(q, minKappa, evidence, issuedAt), null, 2) + '\n');
      written.push(path);
    }
  }
  if (values.report !== undefined) await writeFile(values.report, JSON.stringify(report, null, 2) + '\n');
  process.stdout.write(values.json === true ? JSON.stringify({ report, certificates: written }, null, 2) + '\n' : table(report, written));
  return 0;
}

function parseGold(text: string, path: string): GoldRow[] {
  const rows: GoldRow[] = [];
  const issues: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      issues.push(`line ${i + 1}: not JSON`);
      return;
    }
    const r = GoldRowSchema.safeParse(json);
    if (r.success) rows.push(r.data);
    else for (const x of r.error.issues) issues.push(`line ${i + 1}: ${x.path.join('.') || '(row)'}: ${x.message}`);
  });
  if (issues.length > 0) throw new ConfigError(issues, path);
  return rows;
}

function fmt(x: number | null): string {
  return x === null ? 'null' : x.toFixed(3);
}

function table(report: CalibrationReport, written: readonly string[]): string {
  const lines = [`minimum kappa ${report.minKappa}`];
  for (const q of report.questions) {
    const t = q.target;
    lines.push(
      `${t.questionId}@${t.questionVersion} layer=${t.windowKind ?? '-'} model=${t.requestedModel || '-'} served=${t.servedModel ?? '-'} policy=${t.windowPolicyDigest.slice(0, 12) || '-'} contract=${t.requestContractDigest?.slice(0, 12) ?? '-'} evaluator=${t.evaluatorDigest?.slice(0, 12) ?? '-'}`,
      `  n=${q.n} excluded=${q.excludedGold} missing-labels=${q.missingLabels} missing-predictions=${q.missingPredictions} abstentions=${q.abstentions} agreement=${fmt(q.agreement)} kappa=${fmt(q.kappa)} 95% ${q.kappaInterval === null ? 'n/a' : `[${fmt(q.kappaInterval.lower)}, ${fmt(q.kappaInterval.upper)}]`} sources=${JSON.stringify(q.sourceCounts)}`,
      `  confusion (gold → predicted): ${JSON.stringify(q.confusion)}`,
      `  ${q.qualifies ? 'QUALIFIES' : `does not qualify: ${q.reasons.join('; ')}`}`,
    );
    for (const d of q.disagreements) {
      lines.push(`  disagreement ${d.windowId}: gold ${d.gold}, predicted ${d.predicted}, support ${d.support ?? '-'} (${d.source})`);
    }
  }
  if (report.unknownQuestionRows > 0) lines.push(`${report.unknownQuestionRows} gold rows name unknown questions`);
  for (const c of report.conflictingGold) lines.push(`conflicting gold labels refused: ${c.questionId} ${c.windowId}`);
  lines.push(written.length === 0 ? 'no certificate written' : `certificates written:\n  ${written.join('\n  ')}`);
  return lines.join('\n') + '\n';
}
