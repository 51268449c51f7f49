import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import type { FileSourceReport } from '../../src/ingest/file-source.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { silentLogger } from '../../src/telemetry/logger.ts';
import { FileSourceComponent } from '../../src/topology/components/file-source.ts';
import { PipelineStage } from '../../src/topology/components/pipeline-stage.ts';
import { RunningTopology } from '../../src/topology/running.ts';

/** One OTLP/JSON request with one child span (no root: it never closes by itself). */
function request(traceId: string): string {
  const span = {
    traceId,
    spanId: '00000000000000b1',
    parentSpanId: '00000000000000a1',
    name: 'tool',
    kind: 1,
    startTimeUnixNano: '1000',
    endTimeUnixNano: '2000',
    status: {},
  };
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'test' }, spans: [span] }] }] });
}

let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

function built(paths: string[]) {
  const closed: Trajectory[] = [];
  const drains: string[] = [];
  const pipeline = new Pipeline({
    limits: AssemblerLimitsSchema.parse({}),
    clock: 'event',
    analyze: () => ({ checks: { l0: [], repetition: { status: 'none-observed' }, silenced: [] }, findings: [] }),
    onTrajectory: (t) => closed.push(t),
    sinks: [],
  });
  const drain = pipeline.drain.bind(pipeline);
  pipeline.drain = (cause) => {
    drains.push(cause);
    return drain(cause);
  };
  const lines: string[] = [];
  const report: FileSourceReport = {
    failed: (file, error) => lines.push(`failed ${file}: ${error.message}`),
    note: (file, message) => lines.push(`${file}: ${message}`),
    progress: (done, total) => lines.push(`${done}/${total}`),
  };
  const stage = new PipelineStage(pipeline, undefined);
  const files = new FileSourceComponent(paths, pipeline, stage, report);
  return { closed, drains, lines, files, running: new RunningTopology([[stage], [files]], silentLogger()) };
}

describe('FileSourceComponent', () => {
  it('feeds every file, ends the input (end-of-input), and the stop drains nothing again', async () => {
    dir = await mkdtemp(join(tmpdir(), 'file-source-'));
    const a = join(dir, 'a.json');
    const b = join(dir, 'b.json');
    await writeFile(a, request('0'.repeat(31) + 'a'));
    await writeFile(b, request('0'.repeat(31) + 'b'));
    const { closed, drains, lines, files, running } = built([a, b]);
    await running.start();
    expect(await files.done).toEqual({ read: 2, failures: 0 });
    expect(closed.map((t) => t.closedBy)).toEqual(['end-of-input', 'end-of-input']);
    expect(await running.stop()).toEqual({ outcome: 'stopped' });
    expect(drains).toEqual(['end-of-input']);
    expect(lines).toEqual(['1/2', '2/2']);
  });

  it('reports a file it cannot read and still feeds the others', async () => {
    dir = await mkdtemp(join(tmpdir(), 'file-source-'));
    const good = join(dir, 'good.json');
    await writeFile(good, request('0'.repeat(31) + 'c'));
    const missing = join(dir, 'missing.json');
    const { closed, lines, files, running } = built([missing, good]);
    await running.start();
    expect(await files.done).toEqual({ read: 1, failures: 1 });
    await running.stop();
    expect(closed).toHaveLength(1);
    expect(lines[0]).toMatch(/^failed .*missing\.json: cannot read/);
    expect(lines[1]).toBe('2/2');
  });

  it('stopped without a start: nothing is fed, nothing drains, done says so', async () => {
    const { drains, files, running } = built(['/nonexistent']);
    await running.stop();
    expect(await files.done).toEqual({ read: 0, failures: 0 });
    expect(drains).toEqual([]);
  });
});
