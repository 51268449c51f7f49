/**
 * Where the pipeline allocates: V8's sampling heap profiler, keeping the samples of objects
 * already collected, over a fixed amount of one stage of `bench/pipeline.ts`. Prints bytes
 * allocated per span by function (self and inclusive). Garbage is what the scavenger pays
 * for, so this is the profile to read before cutting GC time; see docs/performance.md.
 *
 * Run: node bench/profile-alloc.ts [synthetic|trail] [stage 0..4] [rounds]
 */
import { mkdtempSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syntheticDataset, trailDataset } from './datasets.ts';
import { pipelineCases } from './pipeline.ts';

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SampleNode[];
}

const which = process.argv[2] ?? 'synthetic';
const stageIndex = Number(process.argv[3] ?? 4);
const rounds = Number(process.argv[4] ?? 10);
const d = which === 'trail' ? trailDataset() : syntheticDataset(1000, 10);
const stage = pipelineCases(d, mkdtempSync(join(tmpdir(), 'trajwatch-alloc-')))[stageIndex]!;
for (let i = 0; i < 3; i++) await stage.run(); // warm up: compiled code allocates differently from the interpreter

const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 512,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
for (let i = 0; i < rounds; i++) await stage.run();
const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: SampleNode } };

const selfBytes = new Map<string, number>();
const inclusiveBytes = new Map<string, number>();
let total = 0;
function walk(node: SampleNode, stack: readonly string[]): void {
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\//, '')}:${lineNumber + 1}`;
  total += node.selfSize;
  selfBytes.set(key, (selfBytes.get(key) ?? 0) + node.selfSize);
  const onStack = stack.includes(key) ? stack : [...stack, key];
  if (node.selfSize > 0) for (const k of onStack) inclusiveBytes.set(k, (inclusiveBytes.get(k) ?? 0) + node.selfSize);
  for (const child of node.children) walk(child, onStack);
}
walk(profile.head, []);

const spans = rounds * d.spanCount;
const top = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${(v / spans).toFixed(0).padStart(7)} B/span  ${k}`)
    .join('\n');
console.log(`${which}, stage ${stageIndex}: ${(total / spans).toFixed(0)} B allocated per span (sampled)`);
console.log(`\nself\n${top(selfBytes, 30)}\n\ninclusive\n${top(inclusiveBytes, 30)}`);
