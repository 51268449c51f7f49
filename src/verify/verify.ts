import { stat } from 'node:fs/promises';
import type { Kafka } from 'kafkajs';
import { dataDirPaths } from '../core/data-dir.ts';
import { UsageError } from '../errors.ts';
import type { ChecksConfig } from '../checks/config.ts';
import type { Audience } from '../findings/audience.ts';
import { AudienceStrip } from './audience-strip.ts';
import type { Checker } from './checker.ts';
import { FindingIdStable } from './finding-id-stable.ts';
import { ManifestFindings } from './manifest-findings.ts';
import { ManifestVsCapture } from './manifest-vs-capture.ts';
import { readTopicToEnd } from './read-kafka.ts';
import { logLines, type ReadTally, readWal, revisionLines } from './read-local.ts';
import { RecordSchema } from './record-schema.ts';
import type { FindingsSource } from './records.ts';
import { RevisionUnique } from './revision-unique.ts';
import { SpansAccounted } from './spans-accounted.ts';
import { INVARIANT_IDS, type InvariantId, type Violation } from './violation.ts';
import { WindowFate } from './window-fate.ts';

/** What to read: the data directory, the views its local logs were written in, and optionally the findings topic. */
export interface VerifyInput {
  dataDir: string;
  /** `sinks.localLog.audience`: the view findings.jsonl and alarms.jsonl hold. */
  localLog: { findings: Audience; alarms: Audience };
  /** The checks' configuration the directory was written with: the capture table's conditions read it. */
  checks: ChecksConfig;
  kafka?: { client: Kafka; topic: string; audience: Audience; timeoutMs?: number };
}

/** One invariant's line of the summary. */
export interface InvariantSummary {
  id: InvariantId;
  checked: number;
  violations: number;
  note?: string;
}

export interface VerifyReport {
  dataDir: string;
  /** What was read: each log and how many records, files and unfinished lines. */
  read: { source: string; records: number; files: number; unfinishedLines: number }[];
  invariants: InvariantSummary[];
  /** The violations kept (the first of each invariant; every one is counted in `invariants`). */
  violations: Violation[];
  ok: boolean;
}

/**
 * Reads a data directory (and, when asked, the findings topic) and checks every invariant over
 * it: the write-ahead log first, then the revision memory, the trajectories, the findings and
 * alarms logs, the quarantine of refused external views, the topic. Memory is what each
 * invariant keeps per key (see each), never the logs.
 * @throws UsageError when `dataDir` is not a readable directory, or holds none of the logs.
 */
export async function verifyDataDir(input: VerifyInput): Promise<VerifyReport> {
  await assertDirectory(input.dataDir);
  const paths = dataDirPaths(input.dataDir);
  const schema = new RecordSchema();
  const strip = new AudienceStrip();
  const spans = new SpansAccounted();
  const checkers: Checker[] = [
    schema,
    new ManifestVsCapture(input.checks),
    new WindowFate(),
    strip,
    new RevisionUnique(),
    new FindingIdStable(),
    new ManifestFindings(),
    spans,
  ];
  const each = (f: (c: Checker) => void) => checkers.forEach(f);
  const read: VerifyReport['read'] = [];
  const tallied = async (
    source: string,
    lines: (tally: ReadTally) => AsyncIterable<{ text: string; at: Violation['location'] }>,
    take: (text: string, at: Violation['location']) => void,
  ) => {
    const tally: ReadTally = { files: 0, unfinishedLines: 0 };
    let records = 0;
    for await (const { text, at } of lines(tally)) {
      records++;
      take(text, at);
    }
    read.push({ source, records, ...tally });
  };

  const wal = await readWal(paths.spanWal, (r) => each((c) => c.walRequest?.(r)));
  for (const u of wal.undecodable) spans.violations.add(u.at, `accepted request ${u.seq} no longer decodes: ${u.why}`);
  read.push({ source: 'wal/', records: wal.requests, files: wal.segments, unfinishedLines: 0 });
  await tallied(
    'revisions/',
    (t) => revisionLines(paths.revisions, t),
    (text, at) => {
      const line = schema.rememberedLine(parseOrText(text), at);
      if (line !== undefined) each((c) => c.remembered?.(line, at));
    },
  );
  await tallied(
    'trajectories.jsonl',
    (t) => logLines(paths.trajectories, t),
    (text, at) => {
      const line = schema.trajectoryLine(text, at);
      if (line !== undefined) each((c) => c.trajectory?.(line, at));
    },
  );
  const stream = (source: FindingsSource) => (text: string, at: Violation['location']) => {
    const r = schema.streamLine(text, at, source.audience);
    if (r !== undefined) each((c) => c.record?.(r, source));
  };
  await tallied('findings.jsonl', (t) => logLines(paths.findings, t), stream({ name: 'findings.jsonl', audience: input.localLog.findings }));
  // The alarms are copies of findings: checked for their view only (their revisions are the findings' own).
  await tallied(
    'alarms.jsonl',
    (t) => logLines(paths.alarms, t),
    (text, at) => {
      const r = schema.streamLine(text, at, input.localLog.alarms);
      if (r !== undefined) strip.record(r, { name: 'alarms.jsonl', audience: input.localLog.alarms });
    },
  );
  await tallied(
    'audience-refused.jsonl',
    (t) => logLines(paths.audienceRefused, t),
    (text, at) => strip.refused(parseOrText(text), at),
  );
  if (input.kafka !== undefined) {
    const { client, topic, audience, timeoutMs } = input.kafka;
    const take = stream({ name: `kafka:${topic}`, audience });
    const records = await readTopicToEnd(client, topic, take, timeoutMs);
    read.push({ source: `kafka:${topic}`, records, files: 0, unfinishedLines: 0 });
  }
  const readSomething = wal.segments > 0 || read.some((r) => r.files > 0 || r.source.startsWith('kafka:'));
  if (!readSomething) {
    throw new UsageError(
      `${input.dataDir} holds none of trajectories.jsonl, findings.jsonl, wal/, revisions/: is it the directory serve writes to (--data-dir), or where replay wrote --trajectories and --findings?`,
    );
  }
  each((c) => c.finish?.());
  const invariants = INVARIANT_IDS.map((id) => {
    const c = checkers.find((x) => x.id === id)!;
    const note = c.note?.();
    return { id, checked: c.checked, violations: c.violations.count, ...(note === undefined ? {} : { note }) };
  });
  const violations = checkers.flatMap((c) => c.violations.kept);
  return { dataDir: input.dataDir, read, invariants, violations, ok: invariants.every((i) => i.violations === 0) };
}

async function assertDirectory(dir: string): Promise<void> {
  let isDir: boolean;
  try {
    isDir = (await stat(dir)).isDirectory();
  } catch (err) {
    throw new UsageError(`cannot read the data directory ${dir}: ${(err as Error).message}`, { cause: err });
  }
  if (!isDir) throw new UsageError(`${dir} is not a directory (--data-dir names the data directory)`);
}

/** A line parsed when it is JSON; else its text, for the schema check to report. */
function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
