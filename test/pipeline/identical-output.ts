/**
 * The in-process replay behind the output-identity test: each source's requests through the
 * protobuf decoder into the pipeline `trajwatch replay` builds (`buildTopology`, event clock,
 * the local JSON-lines logs, no external sink), and what it wrote, read back as digests.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { validateConfig } from '../../src/config-schema.ts';
import { DecodeError } from '../../src/errors.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp/proto-decode.ts';
import { decodeOtlpLogsProto } from '../../src/ingest/otlp/proto-logs-decode.ts';
import { createLogger } from '../../src/telemetry/logger.ts';
import { buildTopology } from '../../src/topology/build.ts';
import { encodeOtlpJsonAsProto } from '../fixtures/otlp/protobufjs-codec.ts';
import { loadTrailTraces } from '../fixtures/otlp/trail-traces.ts';
import { GENERATED_TRAJECTORY_COUNT, generatedTrajectories } from '../helpers/generated-trajectories.ts';

/** One request of a source, protobuf-encoded. */
export interface SourceBody {
  signal: 'traces' | 'logs';
  body: Uint8Array;
}

/** A named input: its requests in send order. */
export interface Source {
  name: string;
  bodies: SourceBody[];
}

/** One output stream: its line count, the sha256 of its bytes and a short digest per line (to name the first line that differs). */
export interface StreamDigest {
  lines: number;
  sha256: string;
  /** The first 8 hex digits of each line's sha256, concatenated. */
  lineDigests: string;
}

/** What one source's replay wrote. */
export interface SourceOutput {
  /** Finding lines of the findings log, in order. */
  findings: StreamDigest;
  /** Analysis-manifest lines of the findings log (the pipeline writes manifests there), in order. */
  manifests: StreamDigest;
  /** The trajectory log. */
  trajectories: StreamDigest;
  /** Findings by `area`: the L0 pattern (`error-output`, ...) or `tool.repetition`. */
  findingsByArea: Record<string, number>;
}

/** What a run keeps beside the digests: the lines themselves, to show the first that differs. */
export interface ReplayResult {
  output: SourceOutput;
  text: { findings: string[]; manifests: string[]; trajectories: string[] };
}

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const LINE_DIGEST_HEX = 8;

/** The TRAIL dev traces of this run (`trail-corpus.ts`), each OTLP/JSON request encoded to protobuf. */
export function trailSource(): Source {
  return {
    name: 'trail-dev',
    bodies: loadTrailTraces().map((t) => ({ signal: 'traces', body: encodeOtlpJsonAsProto(JSON.parse(t.jsonText)) })),
  };
}

/**
 * One source per framework of test/fixtures/frameworks (its traces, and its logs where it has
 * them: content events join the steps of their spans, so they are sent after the traces, as
 * replay sends the files in the order given) and one per test/fixtures/captures folder.
 */
export async function captureSources(): Promise<Source[]> {
  const frameworksDir = join(FIXTURES, 'frameworks');
  const files = (await readdir(frameworksDir)).sort();
  const sources: Source[] = [];
  for (const file of files.filter((f) => f.endsWith('.traces.pb.gz'))) {
    const framework = file.slice(0, -'.traces.pb.gz'.length);
    const bodies: SourceBody[] = [{ signal: 'traces', body: gunzipSync(await readFile(join(frameworksDir, file))) }];
    const logs = `${framework}.logs.pb.gz`;
    if (files.includes(logs)) bodies.push({ signal: 'logs', body: gunzipSync(await readFile(join(frameworksDir, logs))) });
    sources.push({ name: `frameworks/${framework}`, bodies });
  }
  const capturesDir = join(FIXTURES, 'captures');
  for (const framework of (await readdir(capturesDir)).sort()) {
    const dir = join(capturesDir, framework);
    const pbs = (await readdir(dir)).filter((f) => f.endsWith('.pb')).sort();
    const bodies = await Promise.all(pbs.map(async (f): Promise<SourceBody> => ({ signal: 'traces', body: await readFile(join(dir, f)) })));
    sources.push({ name: `captures/${basename(dir)}`, bodies });
  }
  return sources;
}

/** The generated trajectories (test/helpers/generated-trajectories.ts): the first `count` of the same sequence. */
export function generatedSource(count = GENERATED_TRAJECTORY_COUNT): Source {
  const name = count === GENERATED_TRAJECTORY_COUNT ? 'generated' : `generated (first ${count})`;
  return { name, bodies: generatedTrajectories(count).bodies.map((body) => ({ signal: 'traces', body })) };
}

/**
 * Replays `source` as `trajwatch replay` does (its topology, `clock: 'event'`, so closes follow
 * the spans' own times and the output holds no wall-clock value), each body through the
 * protobuf decoder, then ends the input and reads back what was written.
 */
export async function replaySource(source: Source): Promise<ReplayResult> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-identical-'));
  try {
    const config = validateConfig({ value: { dataDir: join(dir, 'data') }, source: 'the identical-output test' });
    const logger = createLogger({ level: 'error', destination: 'stderr' });
    const trajectoriesPath = join(dir, 'trajectories.jsonl');
    const findingsPath = join(dir, 'findings.jsonl');
    const { pipeline, running } = await buildTopology(
      config,
      { clock: 'event', trajectoriesPath, findings: { findingsPath, truncate: true }, externalSinks: false },
      { registry: undefined, logger },
    );
    await running.start();
    for (const { signal, body } of source.bodies) {
      if (signal === 'logs') {
        const decoded = decodeOtlpLogsProto(body);
        if (decoded instanceof DecodeError) throw decoded;
        pipeline.acceptLogs(decoded);
      } else {
        const decoded = decodeOtlpProto(body);
        if (decoded instanceof DecodeError) throw decoded;
        pipeline.accept(decoded);
      }
    }
    // What a file source does after its last file; the stop then drains nothing again.
    await pipeline.drain('end-of-input');
    const stopped = await running.stop();
    if (stopped.outcome === 'failed') throw stopped.error;
    const findingsLog = await readLines(findingsPath);
    const trajectories = await readLines(trajectoriesPath);
    const findings = findingsLog.filter((line) => !isManifest(line));
    const manifests = findingsLog.filter(isManifest);
    return {
      output: {
        findings: digest(findings),
        manifests: digest(manifests),
        trajectories: digest(trajectories),
        findingsByArea: countBy(findings.map((line) => String((JSON.parse(line) as { area?: unknown }).area))),
      },
      text: { findings, manifests, trajectories },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function readLines(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8');
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

/** Manifests share the findings log; they are the lines with a `record_kind` (findings have none). */
function isManifest(line: string): boolean {
  return (JSON.parse(line) as { record_kind?: unknown }).record_kind !== undefined;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export function digest(lines: readonly string[]): StreamDigest {
  const whole = createHash('sha256');
  for (const line of lines) whole.update(`${line}\n`);
  return { lines: lines.length, sha256: whole.digest('hex'), lineDigests: lines.map((l) => sha256(l).slice(0, LINE_DIGEST_HEX)).join('') };
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of [...values].sort()) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}

/**
 * Where `actual` first departs from `expected`: the line number (1-based) and the actual
 * line's start, or undefined when the two are the same.
 */
export function firstDifference(expected: StreamDigest, actual: StreamDigest, actualLines: readonly string[]): string | undefined {
  if (expected.sha256 === actual.sha256 && expected.lines === actual.lines) return undefined;
  const n = Math.max(expected.lines, actual.lines);
  for (let i = 0; i < n; i++) {
    const at = i * LINE_DIGEST_HEX;
    if (expected.lineDigests.slice(at, at + LINE_DIGEST_HEX) === actual.lineDigests.slice(at, at + LINE_DIGEST_HEX)) continue;
    const line = actualLines[i];
    const shown = line === undefined ? '(no such line: the output is shorter)' : line.length > 400 ? `${line.slice(0, 400)}…` : line;
    return `line ${i + 1} of ${actual.lines} (golden has ${expected.lines}) first differs: ${shown}`;
  }
  return `same line digests, different bytes (a line-digest collision): sha256 ${actual.sha256} vs ${expected.sha256}`;
}
