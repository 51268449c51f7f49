import { describe, expect, it } from 'vitest';
import type { AnalysisManifest } from '../../src/findings/manifest-schema.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { JUDGE_DISABLED } from '../../src/judge/consideration.ts';
import type { PipelineCounts } from '../../src/pipeline/counts.ts';
import { PipelineOutputs } from '../../src/pipeline/outputs.ts';
import type { FindingSink, FindingStream } from '../../src/sinks/finding-sink.ts';
import { makeStep, makeTrajectory } from '../helpers/steps.ts';

/** A sink that records what it was given and makes it durable when the test says so. */
function recordingSink(name: string) {
  const written: [FindingStream | 'manifest', string][] = [];
  const waiting: (() => void)[] = [];
  let refusing: string | undefined;
  const sink: FindingSink = {
    name,
    write: (findings, stream) => findings.forEach((f) => written.push([stream, f.finding_id])),
    writeManifest: (m: AnalysisManifest) => written.push(['manifest', `${m.subject.trajectory_key}#${m.subject.revision}`]),
    backpressure: () => refusing,
    backlog: () => ({ records: 0, bytes: 0 }),
    flushed: () => new Promise<void>((r) => waiting.push(r)),
    close: async () => {},
  };
  return {
    sink,
    written,
    refuse: (reason: string | undefined) => (refusing = reason),
    makeDurable: () => waiting.splice(0).forEach((r) => r()),
  };
}

const counts = (): PipelineCounts => ({
  spansAccepted: 0,
  spansRejected: 0,
  trajectoriesClosed: 0,
  trajectoriesForwarded: 0,
  findingsEmitted: 0,
  manifestsEmitted: 0,
});
const finding = (id: string) => ({ finding_id: id }) as Finding;
const analysis = { checks: { l0: [], repetition: { status: 'none-observed' as const }, silenced: [] }, findings: [] };

describe('PipelineOutputs', () => {
  it('refuses input with the first sink that names backpressure, and not when none does', () => {
    const a = recordingSink('a');
    const b = recordingSink('b');
    const outputs = new PipelineOutputs({ sinks: [a.sink, b.sink] }, counts());
    expect(outputs.admission()).toBeUndefined();
    b.refuse('outbox-full');
    expect(outputs.admission()).toBe('outbox-full');
    a.refuse('local-log-backlog');
    expect(outputs.admission()).toBe('local-log-backlog');
  });

  it('fans findings out to every sink in order, judged alarms on their own stream, and counts them', () => {
    const a = recordingSink('a');
    const b = recordingSink('b');
    const judged: string[] = [];
    const n = counts();
    const outputs = new PipelineOutputs({ sinks: [a.sink, b.sink], onJudged: (f) => judged.push(...f.map((x) => x.finding_id)) }, n);
    outputs.writeFindings([]);
    outputs.writeFindings([finding('f1'), finding('f2')]);
    outputs.emitJudged([finding('j1')], [finding('j1')]);
    const expected = [
      ['findings', 'f1'],
      ['findings', 'f2'],
      ['findings', 'j1'],
      ['alarms', 'j1'],
    ];
    expect(a.written).toEqual(expected);
    expect(b.written).toEqual(expected);
    expect(judged).toEqual(['j1']);
    expect(n.findingsEmitted).toBe(3);
  });

  it('writes each manifest to every sink and times durability with one timing per sink in flight', async () => {
    const a = recordingSink('a');
    const timings: string[] = [];
    const n = counts();
    const outputs = new PipelineOutputs({ sinks: [a.sink], onDurable: (sink) => timings.push(sink) }, n);
    const t = makeTrajectory([makeStep({ id: 'root' })]);
    outputs.writeManifest(t, analysis, JUDGE_DISABLED);
    outputs.writeManifest({ ...t, revision: 2 }, analysis, JUDGE_DISABLED);
    expect(a.written).toEqual([
      ['manifest', 'session-1#1'],
      ['manifest', 'session-1#2'],
    ]);
    expect(n.manifestsEmitted).toBe(2);
    a.makeDurable();
    await new Promise((r) => setImmediate(r));
    expect(timings).toEqual(['a']);
    outputs.writeManifest({ ...t, revision: 3 }, analysis, JUDGE_DISABLED);
    a.makeDurable();
    await new Promise((r) => setImmediate(r));
    expect(timings).toEqual(['a', 'a']);
  });
});
