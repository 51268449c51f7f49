/**
 * The per-trajectory analysis of two checkouts in one process, taking turns on the same closed
 * trajectories: the analysis (`createAnalyzer`), then the manifest and every line as the local
 * log writes them. CPU µs per trajectory, best and median of the rounds (the machine is
 * shared: only figures taken in one run compare). See docs/performance.md, "Fourth round".
 *
 * Run: node_modules/.bin/node bench/analysis-ab.ts <before checkout> [synthetic|trail] [rounds] [with-findings]
 * (`with-findings`: only the trajectories that have a finding, where provenance is derived)
 */
import { resolve } from 'node:path';
import { Assembler } from '../src/assemble/assembler.ts';
import type { Trajectory } from '../src/assemble/trajectory.ts';
import { ConfigSchema } from '../src/config-schema.ts';
import { DecodeError } from '../src/errors.ts';
import { decodeOtlpProto } from '../src/ingest/otlp/proto-decode.ts';
import { normalizeSpan } from '../src/normalize/normalize.ts';
import { syntheticDataset, trailDataset } from './datasets.ts';

interface Side {
  analyze: (t: Trajectory) => { checks: unknown; findings: object[]; provenance?: unknown };
  manifest: (input: object) => object;
  line: (record: object) => string;
}

const config = ConfigSchema.parse({});

async function side(root: string): Promise<Side> {
  const { createAnalyzer } = await import(resolve(root, 'src/analyze.ts'));
  const { buildManifest } = await import(resolve(root, 'src/findings/manifest.ts'));
  // A checkout from before the record's line was remembered writes `JSON.stringify`.
  const line = await import(resolve(root, 'src/findings/record-json.ts')).then(
    (m: { recordJson: (r: object) => string }) => m.recordJson,
    () => (r: object) => JSON.stringify(r),
  );
  return { analyze: createAnalyzer(config), manifest: buildManifest, line };
}

function trajectories(which: string): Trajectory[] {
  const d = which === 'trail' ? trailDataset() : syntheticDataset(1000, 10);
  const closed: Trajectory[] = [];
  const assembler = new Assembler(config.assembler, (t) => closed.push(t));
  let watermark = 0;
  for (const body of d.protoBodies) {
    const decoded = decodeOtlpProto(body);
    if (decoded instanceof DecodeError) throw decoded;
    for (const span of decoded.spans) {
      const step = normalizeSpan(span);
      const at = Number(step.endTimeUnixNano / 1_000_000n);
      if (at > watermark) watermark = at;
      assembler.add(step, at);
    }
    assembler.advance(watermark);
  }
  assembler.flush('end-of-input', watermark);
  return closed;
}

let sink = 0;
const cpuMicros = (): number => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

/** µs per trajectory: [analysis, manifest and lines]. */
function round(s: Side, ts: readonly Trajectory[]): [number, number] {
  const t0 = cpuMicros();
  const analyses = ts.map((t) => s.analyze(t));
  const t1 = cpuMicros();
  ts.forEach((t, i) => {
    const a = analyses[i]!;
    const m = s.manifest({ trajectory: t, checks: a.checks, findings: a.findings, provenance: a.provenance, judge: 'disabled', windows: [] });
    for (const f of a.findings) sink += s.line(f).length;
    sink += s.line(m).length;
  });
  const t2 = cpuMicros();
  return [(t1 - t0) / ts.length, (t2 - t1) / ts.length];
}

const [beforeRoot, which = 'synthetic', rounds = '30', only] = process.argv.slice(2);
if (beforeRoot === undefined) throw new Error('usage: bench/analysis-ab.ts <before checkout> [synthetic|trail] [rounds]');
const before = await side(resolve(beforeRoot));
const after = await side(resolve(import.meta.dirname, '..'));
const ts = trajectories(which).filter((t) => only !== 'with-findings' || after.analyze(t).findings.length > 0);
const figures = { before: [[], []] as number[][], after: [[], []] as number[][] };
for (let i = 0; i < Number(rounds); i++) {
  for (const [name, s] of [
    ['before', before],
    ['after', after],
  ] as const) {
    const [a, o] = round(s, ts);
    figures[name][0]!.push(a);
    figures[name][1]!.push(o);
  }
}
const median = (xs: number[]): number => [...xs].sort((p, q) => p - q)[xs.length >> 1]!;
const show = (xs: number[]): string => `best ${Math.min(...xs).toFixed(1)}, median ${median(xs).toFixed(1)}`;
console.log(
  `${which}: ${ts.length} trajectories${only === undefined ? '' : ` (${only})`}, ${rounds} rounds each, CPU µs per trajectory (${sink > 0 ? 'measured' : '-'})`,
);
for (const name of ['before', 'after'] as const) {
  console.log(`  ${name}: analysis ${show(figures[name][0]!)}; manifest + lines ${show(figures[name][1]!)}`);
}
