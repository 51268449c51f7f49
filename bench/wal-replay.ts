/**
 * WAL replay memory: writes a write-ahead log of `--mib` MiB (default 512) of OTLP/protobuf
 * requests, then replays it in a fresh child process the way `serve` does at start
 * (`SpanWal.open` + `DurableIngest.replay`, every request decoded) and reports the peak heap,
 * the peak Buffer memory (arrayBuffers: segment chunks live there, not on the heap) and the
 * peak RSS. `--compare` also replays it the old way (every request read into one array first).
 *
 * Run: node bench/wal-replay.ts [--mib 512] [--compare] [--write-doc]
 * `--write-doc` rewrites the figures between the wal-replay markers in docs/reliability.md.
 * A script, not a timed test: figures depend on the machine.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DurableIngest } from '../src/ingest/wal/durable-ingest.ts';
import { SpanWal, type WalRecord } from '../src/ingest/wal/span-wal.ts';
import { syntheticRequest, syntheticRequestProto } from './synthetic-spans.ts';

const MiB = 1024 * 1024;
const WAL_OPTIONS = { maxBytes: 1024 * 1024 * MiB, segmentBytes: 16 * MiB };

interface ReplayFigures {
  mode: 'stream' | 'collect';
  requests: number;
  seconds: number;
  baseline: { heapMiB: number; arrayBuffersMiB: number; rssMiB: number };
  peak: { heapMiB: number; arrayBuffersMiB: number; rssMiB: number };
}

const { values } = parseArgs({
  options: { mib: { type: 'string' }, compare: { type: 'boolean' }, 'write-doc': { type: 'boolean' }, replay: { type: 'string' }, mode: { type: 'string' } },
});

if (values.replay !== undefined) {
  process.stdout.write(JSON.stringify(await replay(values.replay, values.mode === 'collect' ? 'collect' : 'stream')) + '\n');
} else {
  await main(Number(values.mib ?? 512));
}

async function main(mib: number): Promise<void> {
  const dir = join(mkdtempSync(join(tmpdir(), 'trajwatch-wal-bench-')), 'wal');
  try {
    const written = await writeWal(dir, mib * MiB);
    const runs: ReplayFigures[] = [child(dir, 'stream')];
    if (values.compare === true) runs.push(child(dir, 'collect'));
    const report = { node: process.version, walBytes: written.bytes, segments: written.segments, requests: written.requests, runs };
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
    if (values['write-doc'] === true) writeDoc(report);
  } finally {
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
}

/** Appends distinct synthetic requests (200 spans each, ~100 KiB) until the log holds `bytes`. */
async function writeWal(dir: string, bytes: number): Promise<{ bytes: number; segments: number; requests: number }> {
  const bodies = Array.from({ length: 32 }, (_, i) => Buffer.from(syntheticRequestProto(syntheticRequest(200, i + 1))));
  const { wal } = await SpanWal.open(dir, WAL_OPTIONS);
  let requests = 0;
  while (wal.pendingBytes < bytes) {
    const turn: Promise<void>[] = [];
    for (let i = 0; i < 64; i++) {
      const r = wal.append('protobuf', bodies[requests++ % bodies.length]!);
      if (!r.ok) throw new Error(`append refused: ${r.reason}`);
      turn.push(r.durable);
    }
    await Promise.all(turn);
  }
  const { segments, pendingBytes } = wal.stats();
  await wal.close();
  return { bytes: pendingBytes, segments, requests };
}

function child(dir: string, mode: 'stream' | 'collect'): ReplayFigures {
  const out = execFileSync(process.execPath, [new URL(import.meta.url).pathname, '--replay', dir, '--mode', mode], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(out) as ReplayFigures;
}

/** Replays as `serve` does; `collect` reads every request into an array first (the old replay). */
async function replay(dir: string, mode: 'stream' | 'collect'): Promise<ReplayFigures> {
  const mem = () => {
    const m = process.memoryUsage();
    return { heapMiB: m.heapUsed / MiB, arrayBuffersMiB: m.arrayBuffers / MiB, rssMiB: m.rss / MiB };
  };
  const baseline = mem();
  const peak = { ...baseline };
  const sample = () => {
    const m = mem();
    peak.heapMiB = Math.max(peak.heapMiB, m.heapMiB);
    peak.arrayBuffersMiB = Math.max(peak.arrayBuffersMiB, m.arrayBuffersMiB);
    peak.rssMiB = Math.max(peak.rssMiB, m.rssMiB);
  };
  const timer = setInterval(sample, 5);
  const started = performance.now();
  let requests = 0;
  // The pipeline's side is a counter: what is measured is reading and decoding the log.
  const target: ConstructorParameters<typeof DurableIngest>[0] = {
    admission: () => undefined,
    accept: () => {
      if (++requests % 16 === 0) sample();
    },
    acceptLogs: () => ({ unattachable: 0 }),
    committable: () => new Map(),
    settled: () => Promise.resolve(),
    dropPartitions: () => ({ dropped: 0, mixed: 0 }),
  };
  const { wal, records } = await SpanWal.open(dir, WAL_OPTIONS);
  const ingest = new DurableIngest(target, wal);
  let source: AsyncIterable<WalRecord> | WalRecord[] = records;
  if (mode === 'collect') {
    const all: WalRecord[] = [];
    for await (const r of records) all.push(r);
    sample();
    source = all;
  }
  await ingest.replay(source);
  sample();
  clearInterval(timer);
  await ingest.close();
  const round = (o: typeof peak) => ({ heapMiB: Math.round(o.heapMiB), arrayBuffersMiB: Math.round(o.arrayBuffersMiB), rssMiB: Math.round(o.rssMiB) });
  return { mode, requests, seconds: Math.round((performance.now() - started) / 10) / 100, baseline: round(baseline), peak: round(peak) };
}

function writeDoc(report: { node: string; walBytes: number; segments: number; requests: number; runs: ReplayFigures[] }): void {
  const path = new URL('../docs/reliability.md', import.meta.url);
  const doc = readFileSync(path, 'utf8');
  const start = '<!-- wal-replay:start (bench/wal-replay.ts --compare --write-doc) -->';
  const end = '<!-- wal-replay:end -->';
  const rows = report.runs.map(
    (r) =>
      `| ${r.mode === 'stream' ? 'streamed (serve)' : 'every request in one array first (as before)'} | ${r.requests} | ${r.seconds} | ` +
      `${r.peak.heapMiB} | ${r.peak.arrayBuffersMiB} | ${r.peak.rssMiB} |`,
  );
  const table = [
    start,
    `A write-ahead log of ${Math.round(report.walBytes / MiB)} MiB (${report.segments} segments, ${report.requests} OTLP/protobuf ` +
      `requests of 200 spans) replayed in a fresh process, every request decoded (Node ${report.node}):`,
    '',
    '| replay | requests | seconds | peak heap MiB | peak Buffers MiB | peak RSS MiB |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    end,
  ].join('\n');
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  if (i === -1 || j === -1) throw new Error(`docs/reliability.md has no ${start} … ${end} markers`);
  writeFileSync(path, doc.slice(0, i) + table + doc.slice(j + end.length));
}
