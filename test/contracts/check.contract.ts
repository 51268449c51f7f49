import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../src/analyze.ts';
import { captureGaps } from '../../src/assemble/capture-gaps.ts';
import { gapHides } from '../../src/checks/capture-table.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import type { L0CheckDefinition, SilenceContext } from '../../src/checks/l0-check.ts';
import { ConfigSchema } from '../../src/config-schema.ts';
import { buildManifest } from '../../src/findings/manifest.ts';
import type { Step } from '../../src/normalize/step.ts';
import { step, trajectory } from '../checks/builders.ts';

const cfg = defaultChecksConfig;
const analyze = createAnalyzer(ConfigSchema.parse({}));
const serialize = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

// Names every default tool class meets: outbound sends, gates, plain reads.
const TOOL_NAMES = ['send_email', 'approve_send', 'web_search', 'delete_file', 'review_draft'];
const ARGS = ['{"to": "a@b.c"}', '{"q": "a"}', '{}', 'not json', undefined];
const ERROR = 'Error: quota exceeded for this account today';
const RESULTS = ['ok', ERROR, '{"isError": true}', undefined];

/**
 * Steps of every kind the checks read, capture gaps included: tool steps without a name or
 * arguments, steps in a convention trajwatch does not read, llm steps requesting a tool call that may have no tool step, failures, error
 * texts carried into later arguments and answers.
 */
const stepArb: fc.Arbitrary<Step> = fc
  .record({
    kind: fc.constantFrom('tool' as const, 'tool' as const, 'tool' as const, 'llm' as const, 'agent' as const),
    toolName: fc.option(fc.constantFrom(...TOOL_NAMES), { nil: undefined, freq: 8 }),
    args: fc.constantFrom(...ARGS, ERROR),
    result: fc.constantFrom(...RESULTS),
    failed: fc.boolean(),
    requests: fc.option(fc.constantFrom(...TOOL_NAMES), { nil: undefined, freq: 3 }),
    at: fc.integer({ min: 0, max: 20 }),
    length: fc.integer({ min: 0, max: 5 }),
    id: fc.integer({ min: 1, max: 60 }),
    unread: fc.integer({ min: 0, max: 15 }),
  })
  .map((r) =>
    step(r.kind, {
      id: r.id.toString(16).padStart(16, '0'),
      at: r.at,
      end: r.at + r.length,
      ...(r.kind === 'tool' && r.toolName !== undefined ? { toolName: r.toolName, name: `execute_tool ${r.toolName}` } : {}),
      ...(r.kind === 'tool' && r.args !== undefined ? { args: r.args } : {}),
      ...(r.result !== undefined ? { result: r.result } : {}),
      ...(r.kind === 'llm' && r.requests !== undefined ? { requestedToolCalls: [{ name: r.requests }] } : {}),
      ...(r.failed ? { statusCode: 2 as const, error: { source: 'status' as const, message: ERROR.slice(7) } } : {}),
      // Now and then a span in a convention trajwatch does not read (an unread-convention gap).
      ...(r.unread === 0 ? { unreadConvention: 'mlflow.spanType=TOOL' } : {}),
    }),
  );

/** Complete trajectories with distinct span ids (the assembler's guarantee), an agent run at the root. */
export const completeTrajectoryArb: fc.Arbitrary<Trajectory> = fc
  .uniqueArray(stepArb, { selector: (s) => s.id, maxLength: 14 })
  .map((steps) =>
    trajectory([step('agent', { id: 'f'.repeat(16), at: 0, end: 30, name: 'invoke_agent', agentName: 'assistant', result: `Done. ${ERROR}` }), ...steps]),
  );

const incomplete = (t: Trajectory): Trajectory => ({ ...t, complete: false, incompleteReasons: ['root-not-seen'], closedBy: 'idle-timeout' });
const anchors = (hits: readonly { pattern: string; anchor: string }[]) => new Set(hits.map((h) => `${h.pattern}/${h.anchor}`));

function silenceContext(t: Trajectory): SilenceContext {
  const gaps = captureGaps(t.steps);
  return { gaps };
}

/**
 * What every registered L0 check promises, whatever it looks for (`src/checks/l0-check.ts`):
 * pure, deterministic, never more candidates from less capture, and an absence claim only from
 * a complete capture that no capture gap weakens. `test/checks/registry.contract.test.ts` runs
 * it over the registry, so a new check is covered by registering it.
 */
export function runCheckContract(check: L0CheckDefinition): void {
  describe(`L0 check ${check.pattern} keeps the check contract`, () => {
    it('is pure: a deep-frozen input is read, not changed', () => {
      fc.assert(
        fc.property(completeTrajectoryArb, fc.boolean(), (t, complete) => {
          const input = complete ? t : incomplete(t);
          const copy = structuredClone(input);
          check.run(deepFreeze(input), cfg);
          expect(input).toEqual(copy);
        }),
        { numRuns: 200 },
      );
    });

    it('is deterministic: the same result twice, whatever other trajectories were checked before', () => {
      fc.assert(
        fc.property(completeTrajectoryArb, completeTrajectoryArb, (a, b) => {
          const first = serialize(check.run(a, cfg));
          check.run(b, cfg);
          expect(serialize(check.run(structuredClone(a), cfg))).toBe(first);
          expect(serialize(check.run(a, cfg))).toBe(first);
        }),
        { numRuns: 200 },
      );
    });

    it('never makes a candidate from less capture: its anchors on an incomplete capture are among those on the complete one', () => {
      fc.assert(
        fc.property(completeTrajectoryArb, (t) => {
          const whole = anchors(check.run(t, cfg));
          for (const a of anchors(check.run(incomplete(t), cfg))) expect(whole).toContain(a);
        }),
        { numRuns: 300 },
      );
    });

    if (check.absence === 'always') {
      it('claims absence only from a complete capture no gap weakens: silent on an incomplete one, and when it reports itself silenced', () => {
        let fired = 0;
        fc.assert(
          fc.property(completeTrajectoryArb, (t) => {
            expect(check.run(incomplete(t), cfg)).toEqual([]);
            const hits = check.run(t, cfg);
            if (check.silence?.(t, cfg, silenceContext(t)) !== undefined) expect(hits).toEqual([]);
            if (hits.length > 0) fired++;
          }),
          { numRuns: 400 },
        );
        // The property says something only if the generator reaches trajectories it fires on.
        expect(fired).toBeGreaterThan(0);
      });
    }

    it('is never "none-observed" in the manifest unless the capture is complete and nothing silenced it', () => {
      fc.assert(
        fc.property(completeTrajectoryArb, fc.boolean(), (t, complete) => {
          const input = complete ? t : incomplete(t);
          const analysis = analyze(input);
          const manifest = buildManifest({
            trajectory: input,
            checks: analysis.checks,
            findings: analysis.findings,
            provenance: analysis.provenance,
            judge: 'disabled',
            windows: [],
          });
          const entry = manifest.checks.find((c) => c.check === check.pattern)!;
          const fired = analysis.checks.l0.some((h) => h.pattern === check.pattern);
          if (fired) expect(entry.status).toBe('fired');
          if (!complete && !fired) expect(entry).toMatchObject({ status: 'unavailable', reason: 'incomplete-capture', detail: check.silentOnIncomplete });
          const silenced = analysis.checks.silenced.some((s) => s.pattern === check.pattern);
          if (entry.status === 'none-observed') {
            expect(complete).toBe(true);
            expect(silenced).toBe(false);
          }
          if (silenced && !fired) expect(entry.status).toBe('unavailable');
          // The capture table: a gap the check's row lists (and whose condition holds, for a
          // conditional cell), present on a complete capture, makes its silence unavailable,
          // naming the first such gap.
          const hiding = captureGaps(input.steps).find((g) => gapHides(check.hiddenBy[g.reason], g, input, cfg));
          if (complete && !fired && hiding !== undefined) expect(entry).toMatchObject({ status: 'unavailable', reason: hiding.reason });
        }),
        { numRuns: 200 },
      );
    });
  });
}
