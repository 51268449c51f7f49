/**
 * A fixed amount of pipeline work (by default the full stage: decode → … → durable local logs) on one dataset, for
 * `node --cpu-prof`; see docs/performance.md.
 *
 * Run: node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile-pipeline.ts [synthetic|trail] [rounds] [stage 0..4]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syntheticDataset, trailDataset } from './datasets.ts';
import { pipelineCases } from './pipeline.ts';

const which = process.argv[2] ?? 'synthetic';
const rounds = Number(process.argv[3] ?? 20);
const stageIndex = Number(process.argv[4] ?? 4);
const d = which === 'trail' ? trailDataset() : syntheticDataset(1000, 10);
const stage = pipelineCases(d, mkdtempSync(join(tmpdir(), 'trajwatch-prof-')))[stageIndex]!;
const start = process.cpuUsage();
for (let i = 0; i < rounds; i++) await stage.run();
const cpu = process.cpuUsage(start);
console.log(`${which}: ${((rounds * d.spanCount) / ((cpu.user + cpu.system) / 1e6)).toFixed(0)} spans/CPU-s over ${rounds} rounds`);
