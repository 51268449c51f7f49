/**
 * The manifest's `capture.notes`: capture artefacts trajwatch read past (a wrapper around the
 * arguments, a Python literal instead of JSON, both confirmed by the request), counted per
 * revision so they are never silent; absent when there is none, so every other manifest is
 * unchanged.
 */
import { describe, expect, it } from 'vitest';
import { linkRequests } from '../../src/assemble/link-requests.ts';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { parseProvenanceConfig } from '../../src/findings/provenance/config.ts';
import { deriveProvenance } from '../../src/findings/provenance/derive.ts';
import { buildManifest } from '../../src/findings/manifest.ts';
import { AnalysisManifestSchema } from '../../src/findings/manifest-schema.ts';
import type { Attributes } from '../../src/ingest/span.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import type { Step } from '../../src/normalize/step.ts';
import { makeTrajectory } from '../helpers/steps.ts';
import { makeSpan } from '../normalize/make-span.ts';

let n = 0;
const read = (at: number, attributes: Attributes): Step =>
  normalizeSpan(
    makeSpan({
      spanId: (++n).toString(16).padStart(16, '0'),
      parentSpanId: '00f067aa0ba902b7',
      startTimeUnixNano: BigInt(at) * 1_000_000_000n,
      endTimeUnixNano: BigInt(at) * 1_000_000_000n + 5n,
      attributes,
    }),
  );
const chat = (at: number, id: string, city: string) =>
  read(at, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'tool_call', id, name: 'get_weather', arguments: { city } }] }]),
  });
const tool = (at: number, id: string, args: string) =>
  read(at, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'get_weather',
    'gen_ai.tool.call.id': id,
    'gen_ai.tool.call.arguments': args,
    'gen_ai.tool.call.result': 'ok',
  });

function manifestOf(steps: Step[]) {
  const t = makeTrajectory(linkRequests(steps));
  const checks = runChecks(t, checksConfigSchema.parse({}));
  const provenance = deriveProvenance(t, parseProvenanceConfig({}));
  return buildManifest({ trajectory: t, checks, findings: findingsFromChecks(t, checks, provenance), provenance, judge: 'disabled', windows: [] });
}

describe('manifest capture.notes', () => {
  it('counts arguments read from a confirmed wrapper and from a Python literal, by reason', () => {
    const m = manifestOf([
      chat(1, 'a', 'Paris'),
      tool(2, 'a', "{'city': 'Paris'}"),
      chat(3, 'b', 'Rome'),
      tool(4, 'b', '{"input":{"city":"Rome"},"options":null}'),
      chat(5, 'c', 'Oslo'),
      tool(6, 'c', "{'city': 'Oslo'}"),
    ]);
    expect(AnalysisManifestSchema.parse(m)).toEqual(m);
    expect(m.capture.notes).toEqual([
      { reason: 'args-python-literal', count: 2, detail: expect.stringContaining('Python literal') },
      { reason: 'args-wrapped', count: 1, detail: expect.stringContaining('wrapper') },
    ]);
  });

  it('is absent when nothing was read past', () => {
    const m = manifestOf([chat(1, 'a', 'Paris'), tool(2, 'a', '{"city":"Paris"}')]);
    expect('notes' in m.capture).toBe(false);
  });
});
