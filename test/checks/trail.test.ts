import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Span } from '../../src/ingest/span.ts';
import { trailCorpus } from '../helpers/trail-corpus.ts';
import { loadTrailTraces } from './trail-trajectories.ts';

const corpus = trailCorpus();
const traces = loadTrailTraces(corpus);
const results = new Map(traces.map((t) => [t.traceId, runChecks(t.trajectory, defaultChecksConfig)]));
const eachTrace = traces.map((t) => [t.traceId, t] as const);

const isTool = (s: Span) => s.attributes['openinference.span.kind'] === 'TOOL';
const errored = (s: Span) => s.status.code === 2 || s.events.some((e) => e.name === 'exception');
const exceptionMessage = (s: Span) => s.events.findLast((e) => e.name === 'exception')?.attributes['exception.message'];

type Repetition = 'none-observed' | { unavailable: string[] } | [toolName: string, count: number][];

/**
 * What the default checks give on each TRAIL dev trace, read off the runs and checked against
 * the raw spans below. Keyed by trace: a run asserts the rows of the traces it has (all 26
 * with shared/, the five in-repo ones without), and a trace without a row fails.
 * `wrapped`: errored tool spans whose enclosing step span's exception repeats the tool's.
 */
const EXPECTED: Record<string, { errorOutput: number; wrapped: number; repetition: Repetition }> = {
  '0035f455b3ff2295167a844f04d85d34': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '0ebe673d64647ec44c370638b82d3c78': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '1427b326e21963a1228647ad8dff2bf4': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '25c8275651013fe8398ef0f735eb0912': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '272cdc645b731837366576b37d40fb65': { errorOutput: 2, wrapped: 0, repetition: 'none-observed' },
  '27a6c5ebc3311542156fdde857a0035f': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '3205fa0cb2135fe671bf7cd0e5a26151': { errorOutput: 5, wrapped: 3, repetition: { unavailable: ['tool-call-not-captured'] } },
  '3215fc75e81bdb73706a4fb37b66427f': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '3e65ac7e09b0edd2a5f6b0b18df20f65': { errorOutput: 5, wrapped: 0, repetition: 'none-observed' },
  '3f05ba33cd4ae18ccba6db9a5749c16f': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '4a8d094e92433f1ba1da21f602c417d9': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '4ae16319f0de44a7d1e84595b41ae08d': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '53dba4241b22d5039c9c119871c7c8b4': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  // its parents were never exported: repetition is unavailable, never claimed absent
  '72822db6e120878d916b515c2501246b': { errorOutput: 0, wrapped: 0, repetition: { unavailable: ['root-not-seen', 'orphan-parents'] } },
  '75121379e11c550f3ca58e17c972266b': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '7ee8e8df6e8cd101d9af8a4a4f6ceedb': { errorOutput: 1, wrapped: 0, repetition: 'none-observed' },
  '876eb108c8650d4ada63a8d39aa1e96c': { errorOutput: 2, wrapped: 1, repetition: 'none-observed' },
  '88c63c780aba1f23c3c5345aa340d7e2': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  '9ec7d4a8ab8c74ab56361ef29d1b1660': { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  // the known repeated page_down calls
  a99faf782e8ad4d5f1ccdfcb7e143b9a: {
    errorOutput: 8,
    wrapped: 8,
    repetition: [
      ['page_down', 2],
      ['page_down', 2],
    ],
  },
  af1931b778d7a82ca6a1f7dfdb9aa8bb: { errorOutput: 2, wrapped: 0, repetition: 'none-observed' },
  d9a8dff7edce2d1b15ed4769886d9a2a: { errorOutput: 1, wrapped: 0, repetition: 'none-observed' },
  ef0207e4427fe22aeb1c2105932b74d7: { errorOutput: 3, wrapped: 3, repetition: 'none-observed' },
  f04b425c107f7b972209528a46c407d9: { errorOutput: 2, wrapped: 2, repetition: 'none-observed' },
  f39aec9b8a61fd2aaed5849cc00bc165: { errorOutput: 0, wrapped: 0, repetition: 'none-observed' },
  fdaf88f3c0437bf27438b60ba4102c8a: { errorOutput: 1, wrapped: 0, repetition: 'none-observed' },
};

function expected(traceId: string) {
  const row = EXPECTED[traceId];
  if (row === undefined) throw new Error(`${traceId}: no expectations for this TRAIL trace; add its row`);
  return row;
}

/** Errored tool spans whose parent's exception message contains the tool's (smolagents' AgentExecutionError). */
function wrappedPairs(spans: Span[]): { child: Span; parent: Span }[] {
  const pairs: { child: Span; parent: Span }[] = [];
  for (const child of spans.filter((s) => isTool(s) && errored(s))) {
    const parent = spans.find((s) => s.spanId === child.parentSpanId);
    const inner = exceptionMessage(child);
    const outer = parent === undefined ? undefined : exceptionMessage(parent);
    if (typeof inner === 'string' && typeof outer === 'string' && outer.includes(inner)) pairs.push({ child, parent: parent! });
  }
  return pairs;
}

describe(`checks on the TRAIL dev traces (${corpus.description})`, () => {
  it(`reads every trace of the corpus (${corpus.files.length}), each with its row of expectations`, () => {
    expect(traces.map((t) => t.traceId)).toEqual(corpus.files.map((f) => f.traceId));
    for (const t of traces) expect(EXPECTED[t.traceId], t.traceId).toBeDefined();
  });

  it.each(eachTrace)("%s: error-output fires exactly on the errored spans, less the step spans that only wrap a tool's failure", (traceId, trace) => {
    const wrappers = new Set(wrappedPairs(trace.spans).map((p) => p.parent.spanId));
    const want = [...new Set(trace.spans.filter(errored).map((s) => s.spanId))].filter((id) => !wrappers.has(id)).sort();
    const hits = results
      .get(traceId)!
      .l0.filter((h) => h.pattern === 'error-output')
      .map((h) => h.anchor);
    expect(hits.sort()).toEqual(want);
    expect(hits).toHaveLength(expected(traceId).errorOutput);
  });

  it.each(eachTrace)("%s: a step span whose exception wraps its tool child's is evidence of the tool's hit, not a hit of its own", (traceId, trace) => {
    // Read from the raw spans: smolagents raises AgentExecutionError("... TypeError: <the tool's message>").
    const pairs = wrappedPairs(trace.spans);
    expect(pairs).toHaveLength(expected(traceId).wrapped);
    const errorOutput = results.get(traceId)!.l0.filter((h) => h.pattern === 'error-output');
    // folded hits are exactly the wrapped tool failures, each with its wrapper as second evidence
    const folded = errorOutput.filter((h) => h.evidence.length > 1);
    expect(folded.map((h) => h.anchor).sort()).toEqual(pairs.map((p) => p.child.spanId).sort());
    for (const { child, parent } of pairs) {
      expect(errorOutput.map((h) => h.anchor)).not.toContain(parent.spanId);
      const hit = errorOutput.find((h) => h.anchor === child.spanId)!;
      expect(hit.evidence.map((e) => e.spanId).sort()).toEqual([child.spanId, parent.spanId].sort());
    }
  });

  it.each(eachTrace)('%s: every byte-identical repeated tool call is found as repetition with its span ids', (traceId, trace) => {
    const byCall = new Map<string, string[]>();
    for (const s of trace.spans.filter(isTool)) {
      const key = JSON.stringify([s.attributes['tool.name'], s.attributes['input.value']]);
      byCall.set(key, [...(byCall.get(key) ?? []), s.spanId]);
    }
    const want = [...byCall.values()].filter((ids) => ids.length >= 2).map((ids) => [...ids].sort());
    const repetition = results.get(traceId)!.repetition;
    const found = repetition.status === 'observed' ? repetition.groups.map((g) => g.attempts.map((a) => a.spanId).sort()) : [];
    for (const ids of want) expect(found).toContainEqual(ids);
    if (want.length === 0) expect(repetition.status).not.toBe('observed');
  });

  it.each(eachTrace)('%s: repetition is observed, not observed, or unavailable (with its reasons) as recorded', (traceId, trace) => {
    const repetition = results.get(traceId)!.repetition;
    const row = expected(traceId).repetition;
    if (row === 'none-observed') expect(repetition.status).toBe('none-observed');
    else if ('unavailable' in row) {
      expect(repetition).toEqual({ status: 'unavailable', reasons: row.unavailable });
      // unavailable exactly when the capture cannot support a claim: an incomplete trajectory is one such case
      if (!trace.trajectory.complete) expect(row.unavailable).toEqual(trace.trajectory.incompleteReasons);
    } else {
      expect(repetition.status).toBe('observed');
      if (repetition.status === 'observed') expect(repetition.groups.map((g) => [g.toolName, g.count])).toEqual(row);
    }
  });

  it('finds exactly one incomplete capture, the trace whose parents were never exported (it is in the repository)', () => {
    expect(traces.filter((t) => !t.trajectory.complete).map((t) => t.traceId)).toEqual(['72822db6e120878d916b515c2501246b']);
  });
});
