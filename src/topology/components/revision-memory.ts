import type { Assembler } from '../../assemble/assembler.ts';
import { RevisionLog } from '../../assemble/revision-log.ts';
import type { Config } from '../../config-schema.ts';
import type { FindingSink } from '../../sinks/finding-sink.ts';
import type { JsonlLog } from '../../sinks/jsonl-log.ts';
import { RevisionMemorySink } from '../../sinks/revision-memory-sink.ts';
import type { Logger } from '../../telemetry/logger.ts';
import { dataDirPaths } from '../../core/data-dir.ts';

/**
 * The closed-revision memory under `<dataDir>/revisions` (serve, `revisionMemory.enabled`),
 * written once `others` and the trajectory log are durable. `replay` has none: it reads
 * files, not a history, and its in-process memory covers what it reads.
 */
export async function openRevisionMemory(
  config: Config,
  others: readonly FindingSink[],
  trajectoryLog: JsonlLog | undefined,
): Promise<{ sink: RevisionMemorySink; log: RevisionLog } | undefined> {
  if (!config.revisionMemory.enabled) return undefined;
  const log = await RevisionLog.open(dataDirPaths(config.dataDir).revisions, config.revisionMemory);
  const outputs = [...others];
  const sink = new RevisionMemorySink(log, async () => {
    await trajectoryLog?.flushed();
    await Promise.all(outputs.map((s) => s.flushed()));
  });
  return { sink, log };
}

/**
 * Replays the memory into `assembler` before any source runs, and logs when it was cut: then
 * spans that started before its horizon, under keys it does not hold, open
 * `previous-revision-unknown` revisions.
 */
export async function restoreRevisionMemory(
  log: RevisionLog,
  assembler: Assembler,
  logger: Logger,
  context: { priorData: boolean; walCoversTail: boolean },
): Promise<void> {
  const replayed = await log.replay((r) => assembler.restore([r]), { ...context, nowMs: Date.now() });
  assembler.restore([], replayed.horizonMs);
  const { revisions, cut, horizonMs } = replayed;
  if (cut === undefined) {
    logger.info({ revisions }, `revision memory: restored ${revisions} closed revision(s)`);
    return;
  }
  logger.warn(
    { revisions, cut, horizonMs },
    `revision memory: restored ${revisions} closed revision(s), but it was cut (${cut}): a span that started before ` +
      `${new Date(horizonMs!).toISOString()} under a key it does not hold opens a previous-revision-unknown revision`,
  );
}
