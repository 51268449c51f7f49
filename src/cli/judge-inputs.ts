import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { underDataDir } from '../judge/config.ts';
import { LEDGER_FILE } from '../judge/ledger/ledger.ts';
import { resolveConfig } from './resolve-config.ts';
import { dataDirPaths, GOLD_FILE } from '../core/data-dir.ts';

/** Where `label` writes gold labels, under the data directory. */
export { GOLD_FILE } from '../core/data-dir.ts';

/** The judge's files of one data directory, as serve and label use them (`judge.ledgerDir` honoured). */
export async function judgeFiles(dataDirFlag: string | undefined, configPath?: string): Promise<{ dataDir: string; ledger: string; gold: string }> {
  const config = await resolveConfig(configPath, [{ path: ['dataDir'], value: dataDirFlag, flag: '--data-dir' }]);
  return { dataDir: config.dataDir, ledger: join(underDataDir(config.dataDir, config.judge.ledgerDir), LEDGER_FILE), gold: dataDirPaths(config.dataDir).gold };
}

/**
 * The line for an input that is not there, naming it and what makes it; undefined when it
 * exists. A report over no input would read as "nothing to report", which is a claim the
 * command cannot make.
 */
export function missingInput(kind: 'ledger' | 'gold', path: string): string | undefined {
  if (existsSync(path)) return undefined;
  return kind === 'ledger'
    ? `no judge ledger at ${path}: \`trajwatch serve\` writes it while the judge runs (judge.enabled: true with a judge.client; docs/decision-points.md); or point at one with --ledger FILE or --data-dir DIR`
    : `no gold labels at ${path}: label judged windows with \`trajwatch label\` (it appends to <dataDir>/${GOLD_FILE}); or point at a file with --gold FILE or --data-dir DIR`;
}
