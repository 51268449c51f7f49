/**
 * Revision-memory replay at start: writes a closed-revision memory of `--mib` MiB (default
 * 128, the default `revisionMemory.maxBytes`) of revisions of 20 spans each, then replays it
 * into an assembler with the default limits the way `serve` does before any source runs, and
 * reports the lines, the seconds, the heap after and the peak RSS (run with --expose-gc).
 *
 * Run: node --expose-gc bench/revision-memory-replay.ts [--mib 128]
 * A script, not a timed test: figures depend on the machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Assembler } from '../src/assemble/assembler.ts';
import { AssemblerLimitsSchema } from '../src/assemble/limits.ts';
import { RevisionLog } from '../src/assemble/revision-log.ts';
import { RevisionMemoryConfigSchema } from '../src/assemble/revision-log-config.ts';
import { SpanDigests } from '../src/assemble/span-digests.ts';
import type { Step } from '../src/normalize/step.ts';

const MiB = 1024 * 1024;
const { values } = parseArgs({ options: { mib: { type: 'string' } } });
const mib = Number(values.mib ?? 128);
const dir = mkdtempSync(join(tmpdir(), 'trajwatch-revision-bench-'));
const config = RevisionMemoryConfigSchema.parse({ maxBytes: Math.max(2 * 8 * MiB, (mib + 16) * MiB) });

const step = (traceId: string, i: number): Step => ({
  traceId,
  id: i.toString(16).padStart(16, '0'),
  kind: 'tool',
  name: 'execute_tool web_search',
  convention: 'genai',
  startTimeUnixNano: 1_000_000_000n,
  endTimeUnixNano: 2_000_000_000n,
  statusCode: 0,
  attributes: {},
  resource: {},
  eventNames: [],
  encodedBytes: 400,
});

const writer = await RevisionLog.open(dir, config);
await writer.replay(() => {}, { priorData: false, walCoversTail: true, nowMs: Date.now() });
let written = 0;
while (writer.fileBytes < mib * MiB) {
  const batch = Array.from({ length: 1_000 }, (_, j) => {
    const traceId = (written + j).toString(16).padStart(32, '0');
    const digests = SpanDigests.of(Array.from({ length: 20 }, (_, i) => step(traceId, i)));
    return {
      key: `conv-${written + j}`,
      revision: 1,
      inherited: { reasons: [], reasonsWithoutSteps: [], conflicts: [], sessionConflicts: [], refusedSpans: 0 },
      traceIds: [traceId],
      partitions: undefined,
      digests,
      closedAtMs: written + j,
    };
  });
  writer.append(batch);
  await writer.flushed();
  written += batch.length;
}
const fileBytes = writer.fileBytes;
await writer.close();

globalThis.gc?.();
const rssBefore = process.memoryUsage().rss;
let peakRss = rssBefore;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
const started = performance.now();
const assembler = new Assembler(AssemblerLimitsSchema.parse({}), () => {});
const log = await RevisionLog.open(dir, config);
const replayed = await log.replay((r) => assembler.restore([r]), { priorData: true, walCoversTail: true, nowMs: Date.now() });
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
await log.close();
globalThis.gc?.();
const heapMiB = process.memoryUsage().heapUsed / MiB;
console.log(
  `revision memory of ${(fileBytes / MiB).toFixed(0)} MiB (${written} revisions of 20 spans, ${(fileBytes / written).toFixed(0)} B a line) replayed in ${seconds.toFixed(2)} s ` +
    `(${replayed.revisions} lines, cut ${replayed.cut ?? 'none'}); heap after ${heapMiB.toFixed(0)} MiB, peak RSS ${(peakRss / MiB).toFixed(0)} MiB (${(rssBefore / MiB).toFixed(0)} MiB before the replay) (Node ${process.version})`,
);
rmSync(dir, { recursive: true, force: true });
