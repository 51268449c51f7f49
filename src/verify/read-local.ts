/**
 * The readers at the edge: a data directory's local logs, its span write-ahead log and its
 * closed-revision memory, streamed a chunk at a time (memory holds a chunk and the line being
 * cut, never a file). Nothing is opened for writing, so a running serve's directory can be read.
 */
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DecodeError, StorageError } from '../errors.ts';
import { decodeTracesBody } from '../ingest/otlp/decode-body.ts';
import { RELEASE_TYPE, REQUEST_BY_TYPE, WAL_CODEC, WAL_NAMING } from '../ingest/wal/span-wal.ts';
import { logFiles } from '../storage/rotated-log-files.ts';
import { readSegment } from '../storage/segment-reader.ts';
import { numberedSegments } from '../storage/segment-naming.ts';
import type { WalRequest } from './records.ts';
import type { RecordLocation } from './violation.ts';

/** The revision memory's segments (`assemble/revision-log.ts` names them so). */
const REVISION_NAMING = numberedSegments('seg-', '.jsonl');

const isMissing = (err: unknown): boolean =>
  (err as NodeJS.ErrnoException).code === 'ENOENT' ||
  ((err instanceof StorageError || err instanceof Error) && (err.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT');

/** What a read found: how many files, and the lines left out because their writer had not finished them. */
export interface ReadTally {
  files: number;
  unfinishedLines: number;
}

/**
 * Every whole line of one file with its 1-based number. A last line without its newline is
 * still being written (a running serve): left out and counted. A file gone before it is opened
 * (rotated or retired under a running serve) yields nothing.
 */
export async function* fileLines(file: string, tally: ReadTally): AsyncGenerator<{ text: string; at: RecordLocation }> {
  const stream = createReadStream(file);
  let rest: Buffer = Buffer.alloc(0);
  let line = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const data = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
      let start = 0;
      for (let nl = data.indexOf(10, start); nl !== -1; nl = data.indexOf(10, start)) {
        line++;
        if (nl > start) yield { text: data.toString('utf8', start, nl), at: { file, line } };
        start = nl + 1;
      }
      rest = data.subarray(start);
    }
  } catch (err) {
    if (isMissing(err)) return;
    throw err;
  }
  tally.files++;
  if (rest.length > 0) tally.unfinishedLines++;
}

/** Every whole line of the rotated local log at `path` (closed segments by offset, then the active file). */
export async function* logLines(path: string, tally: ReadTally): AsyncGenerator<{ text: string; at: RecordLocation }> {
  for (const file of await logFiles(path)) yield* fileLines(file, tally);
}

/** Every whole line of the revision memory's segments, oldest first. */
export async function* revisionLines(dir: string, tally: ReadTally): AsyncGenerator<{ text: string; at: RecordLocation }> {
  for (const file of await segmentFiles(dir, REVISION_NAMING.parse)) yield* fileLines(file, tally);
}

async function segmentFiles(dir: string, parse: (name: string) => number | undefined): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
  return entries
    .map((f) => ({ f, n: parse(f) }))
    .filter((s): s is { f: string; n: number } => s.n !== undefined)
    .sort((a, b) => a.n - b.n)
    .map((s) => join(dir, s.f));
}

/** What the write-ahead log held: its release floor and its requests. */
export interface WalRead {
  segments: number;
  /** Traces requests read. */
  requests: number;
  releasedBelow: number;
  /** Requests whose body no longer decodes (they did when accepted): reported by the caller. */
  undecodable: { seq: number; at: RecordLocation; why: string }[];
}

/**
 * Streams the span write-ahead log's traces requests to `take`, each with its spans and whether
 * the log released it (below its newest release mark). Two passes over the segments: the
 * newest mark first, then the requests (a mark is written after the requests it releases). A
 * torn last record (a running or crashed writer) is left out; a segment deleted under the
 * read (released and retired by a running serve) is skipped.
 */
export async function readWal(dir: string, take: (r: WalRequest) => void): Promise<WalRead> {
  const files = await segmentFiles(dir, WAL_NAMING.parse);
  const frames = async function* () {
    for (const file of files) {
      try {
        for await (const { value, offset } of readSegment(file, WAL_CODEC, { onTornTail: () => {} })) yield { value, at: { file, offset } };
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    }
  };
  let releasedBelow = 0;
  for await (const { value } of frames()) if (value.type === RELEASE_TYPE) releasedBelow = Math.max(releasedBelow, value.seq);
  const undecodable: WalRead['undecodable'] = [];
  let requests = 0;
  for await (const { value, at } of frames()) {
    const request = REQUEST_BY_TYPE[value.type];
    if (request === undefined || request.signal !== 'traces') continue;
    requests++;
    const decoded = decodeTracesBody(request.format, Buffer.from(value.payload));
    if (decoded instanceof DecodeError) {
      undecodable.push({ seq: value.seq, at, why: decoded.message });
      continue;
    }
    take({ seq: value.seq, released: value.seq < releasedBelow, spans: decoded.spans.map((s) => ({ traceId: s.traceId, spanId: s.spanId })), at });
  }
  return { segments: files.length, requests, releasedBelow, undecodable };
}
