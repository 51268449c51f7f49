import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError, UsageError } from '../errors.ts';
import { calibrate, GoldRowSchema, type CalibrationReport, type GoldRow } from '../calibration/calibrate.ts';
import { certificateFileName, certificateFor } from '../calibration/certify.ts';
import { MIN_KAPPA } from '../judge/decision-policy.ts';
import { LEDGER_FILE, readLedger } from '../judge/ledger/ledger.ts';
import { parseFlags } from './flags.ts';
import { GOLD_FILE, judgeFiles, missingInput } from './judge-inputs.ts';
import { sha256Hex } from '../core/digest.ts';
import { dataDirPaths } from '../core/data-dir.ts';

export const CALIBRATE_HELP = `Usage: trajwatch calibrate [options]

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
  --data-dir DIR     data directory of serve and label (default ./data; env TRAJWATCH_DATA_DIR):
                     gold DIR/${GOLD_FILE}, ledger DIR/judge/${LEDGER_FILE}, certificates DIR/judge/certificates
  --config FILE      configuration (as for serve): dataDir, judge.ledgerDir
  --gold FILE        gold rows (JSONL; default DIR/${GOLD_FILE}, as trajwatch label writes them)
  --ledger FILE      ledger to read (default DIR/judge/${LEDGER_FILE})
  --out DIR          where certificates are written (default DIR/judge/certificates)
  --min-kappa N      minimum kappa, at least ${MIN_KAPPA} (default ${MIN_KAPPA})
  --report FILE      also write the full report as JSON
  --dry-run          report only; write no certificate
  --json             print the report as JSON instead of a table
  --help             this text

Exit status: 0 when the report was produced; 1 on invalid gold, or when the gold file or the
ledger is not there (named, with what writes it); 2 on a usage error (a flag or its value).
`;

export async function calibrateCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, CALIBRATE_HELP, {
    strings: ['gold', 'data-dir', 'config', 'ledger', 'out', 'min-kappa', 'report'],
    booleans: ['dry-run', 'json'],
  });
  if (flags === undefined) return 0;
  const { values } = flags;
  const minKappa = values['min-kappa'] === undefined ? MIN_KAPPA : Number(values['min-kappa']);
  if (!Number.isFinite(minKappa) || minKappa < MIN_KAPPA || minKappa > 1) {
    throw new UsageError(`--min-kappa: ${values['min-kappa']} must be a number from ${MIN_KAPPA} to 1`);
  }
  const files = await judgeFiles(values['data-dir'], values.config);
  const goldPath = resolve(values.gold ?? files.gold);
  const ledgerPath = resolve(values.ledger ?? files.ledger);
  const outDir = resolve(values.out ?? dataDirPaths(files.dataDir).certificates);
  const noGold = missingInput('gold', goldPath);
  if (noGold !== undefined) {
    process.stderr.write(`trajwatch calibrate: ${noGold}\n`);
    return 1;
  }
  const goldText = await readFile(goldPath, 'utf8');
  const gold = parseGold(goldText, goldPath);
  // Checked after the gold is: a malformed gold file is reported whatever the ledger.
  const noLedger = missingInput('ledger', ledgerPath);
  if (noLedger !== undefined) {
    process.stderr.write(`trajwatch calibrate: ${noLedger}\n`);
    return 1;
  }
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
