import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Span } from '../../src/ingest/span.ts';
import { loadTrailTraces } from './trail-trajectories.ts';

const traces = loadTrailTraces();
const results = new Map(traces.map((t) => [t.traceId, runChecks(t.trajectory, defaultChecksConfig)]));

const isTool = (s: Span) => s.attributes['openinference.span.kind'] === 'TOOL';
const errored = (s: Span) => s.status.code === 2 || s.events.some((e) => e.name === 'exception');

describe('checks on the TRAIL dev traces', () => {
  it('reads all 26 traces', () => {
    expect(traces).toHaveLength(26);
  });

  it.each(traces.map((t) => [t.traceId, t] as const))('%s: every errored tool span yields an error-output hit', (traceId, trace) => {
    const expected = trace.spans.filter((s) => isTool(s) && errored(s)).map((s) => s.spanId).sort();
    const hits = results.get(traceId)!.l0.filter((h) => h.pattern === 'error-output').map((h) => h.anchor);
    expect(hits).toEqual(expect.arrayContaining(expected));
  });

  it.each(traces.map((t) => [t.traceId, t] as const))(
    '%s: a step span whose exception wraps its tool child\'s is evidence of the tool\'s hit, not a hit of its own',
    (traceId, trace) => {
      // Read from the raw spans: smolagents raises AgentExecutionError("... TypeError: <the tool's message>").
      const message = (s: Span) => s.events.findLast((e) => e.name === 'exception')?.attributes['exception.message'];
      const errorOutput = results.get(traceId)!.l0.filter((h) => h.pattern === 'error-output');
      for (const child of trace.spans.filter((s) => isTool(s) && errored(s))) {
        const parent = trace.spans.find((s) => s.spanId === child.parentSpanId);
        const inner = message(child);
        const outer = parent === undefined ? undefined : message(parent);
        if (typeof inner !== 'string' || typeof outer !== 'string' || !outer.includes(inner)) continue;
        expect(errorOutput.map((h) => h.anchor)).not.toContain(parent!.spanId);
        const hit = errorOutput.find((h) => h.anchor === child.spanId)!;
        expect(hit.evidence.map((e) => e.spanId)).toContain(parent!.spanId);
      }
    },
  );

  it('folds each of the 17 wrapped tool failures into its tool\'s hit', () => {
    const folded = [...results.values()].flatMap((r) => r.l0.filter((h) => h.pattern === 'error-output' && h.evidence.length > 1));
    expect(folded).toHaveLength(17);
    expect(folded.every((h) => h.evidence.length === 2)).toBe(true);
  });

  it.each(traces.map((t) => [t.traceId, t] as const))(
    '%s: every byte-identical repeated tool call is found as repetition with its span ids',
    (traceId, trace) => {
      const byCall = new Map<string, string[]>();
      for (const s of trace.spans.filter(isTool)) {
        const key = JSON.stringify([s.attributes['tool.name'], s.attributes['input.value']]);
        byCall.set(key, [...(byCall.get(key) ?? []), s.spanId]);
      }
      const expected = [...byCall.values()].filter((ids) => ids.length >= 2).map((ids) => [...ids].sort());
      const repetition = results.get(traceId)!.repetition;
      const found = repetition.status === 'observed' ? repetition.groups.map((g) => g.attempts.map((a) => a.spanId).sort()) : [];
      for (const ids of expected) expect(found).toContainEqual(ids);
      if (expected.length === 0) expect(repetition.status).not.toBe('observed');
    },
  );

  it('finds the known repeated page_down calls of a99faf78 as two groups of two', () => {
    const repetition = results.get('a99faf782e8ad4d5f1ccdfcb7e143b9a')!.repetition;
    expect(repetition.status).toBe('observed');
    if (repetition.status !== 'observed') return;
    expect(repetition.groups.map((g) => [g.toolName, g.count])).toEqual([
      ['page_down', 2],
      ['page_down', 2],
    ]);
  });

  it('reports repetition as unavailable, never as absent, for the trace with missing parents', () => {
    const incomplete = traces.filter((t) => !t.trajectory.complete);
    expect(incomplete.map((t) => t.traceId)).toEqual(['72822db6e120878d916b515c2501246b']);
    expect(results.get('72822db6e120878d916b515c2501246b')!.repetition).toEqual({
      status: 'unavailable',
      reasons: ['root-not-seen', 'orphan-parents'],
    });
  });
});
