import { join } from 'node:path';

/** The gold labels' file under the data directory (`trajwatch label` writes it, calibrate and reliability read it). */
export const GOLD_FILE = 'judge/gold.jsonl';

/**
 * Every fixed path in the data directory, named once: each reader and writer asks here
 * (docs/operations.md lists them). The judge's configurable directories (`judge.ledgerDir`,
 * `judge.certificatesDir`, ...) resolve against the data directory in `judge/config.ts`.
 *
 * @example const { trajectories, outbox } = dataDirPaths(config.dataDir); outbox('kafka')
 */
export function dataDirPaths(dataDir: string) {
  return {
    trajectories: join(dataDir, 'trajectories.jsonl'),
    findings: join(dataDir, 'findings.jsonl'),
    alarms: join(dataDir, 'alarms.jsonl'),
    /** The span write-ahead log's segments. */
    spanWal: join(dataDir, 'wal'),
    /** The closed-revision memory's log. */
    revisions: join(dataDir, 'revisions'),
    /** Records an external view refused, kept whole. */
    audienceRefused: join(dataDir, 'audience-refused.jsonl'),
    /** A sink's outbox: `outbox/<sink name>`. */
    outbox: (sink: string) => join(dataDir, 'outbox', sink),
    gold: join(dataDir, GOLD_FILE),
    /** Where `calibrate` writes certificates unless told (`--out`). */
    certificates: join(dataDir, 'judge', 'certificates'),
    /** Where `reliability` writes its chart unless told (`--png`). */
    reliabilityPng: join(dataDir, 'judge', 'reliability.png'),
  };
}
