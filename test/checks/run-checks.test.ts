import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { L0_PATTERNS } from '../../src/checks/check-result.ts';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Step } from '../../src/normalize/step.ts';
import { toToolArgs } from '../../src/normalize/tool-args.ts';
import { agent, conflictOn, failedTool, step, tool, trajectory } from './builders.ts';

const cfg = defaultChecksConfig;
const serialize = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

describe('runChecks', () => {
  it('runs every pattern and orders hits by pattern, then trajectory position', () => {
    const send = tool('send_email', { at: 3, args: '{"to": "a@b.c", "body": "x"}' });
    const gate = tool('approve_email', { at: 5, args: '{}' });
    const bad = failedTool('lookup', 'Lookup failed: customer record 42 is locked', { at: 1, args: 'oops' });
    const t = trajectory([agent('Sent. Lookup failed: customer record 42 is locked', { at: 0, end: 9 }), gate, send, bad]);
    const { l0 } = runChecks(t, cfg);
    expect(l0.map((h) => [h.pattern, h.anchor])).toEqual([
      ['error-output', bad.id],
      ['fault-passthrough', bad.id],
      ['malformed-structure', bad.id],
      ['unguarded-send', send.id],
      ['out-of-order-gate', gate.id],
    ]);
  });
});

const TOOL_NAMES = ['web_search', 'send_email', 'approve_send', 'page_down', 'delete_file', 'review_draft'];
const ARGS = ['{"q": "a", "n": 1}', '{"n": 1, "q": "a"}', '{"q": "b"}', '{}', 'not json', undefined];
const RESULTS = ['ok', 'Error: quota exceeded for this account today', '{"isError": true}', undefined];

const stepArb: fc.Arbitrary<Step> = fc
  .record({
    kind: fc.constantFrom('tool' as const, 'tool' as const, 'llm' as const, 'agent' as const, 'other' as const),
    toolName: fc.option(fc.constantFrom(...TOOL_NAMES), { nil: undefined }),
    args: fc.constantFrom(...ARGS),
    result: fc.constantFrom(...RESULTS),
    input: fc.option(fc.constantFrom('Error: quota exceeded for this account today', 'hello'), { nil: undefined }),
    failed: fc.boolean(),
    at: fc.integer({ min: 0, max: 20 }),
    length: fc.integer({ min: 0, max: 5 }),
    id: fc.integer({ min: 1, max: 40 }),
  })
  .map((r) => {
    const s = step(r.kind, {
      id: r.id.toString(16).padStart(16, '0'),
      at: r.at,
      end: r.at + r.length,
      ...(r.kind === 'tool' && r.toolName !== undefined ? { toolName: r.toolName } : {}),
      ...(r.kind === 'tool' && r.args !== undefined ? { args: r.args } : {}),
      ...(r.result !== undefined ? { result: r.result } : {}),
      ...(r.input !== undefined ? { input: r.input } : {}),
      ...(r.failed ? { statusCode: 2 as const, error: { source: 'status' as const, message: 'quota exceeded for this account today' } } : {}),
    });
    return s;
  });

const trajectoryArb = fc
  .record({ steps: fc.array(stepArb, { maxLength: 25 }), complete: fc.boolean(), conflictIndex: fc.option(fc.nat(), { nil: undefined }) })
  .map(({ steps, complete, conflictIndex }) => {
    const conflicted = conflictIndex === undefined || steps.length === 0 ? undefined : steps[conflictIndex % steps.length];
    return trajectory(steps, { complete, conflicts: conflicted === undefined ? [] : [conflictOn(conflicted)] });
  });

describe('runChecks properties', () => {
  it('is deterministic, does not mutate its input, and gives byte-identical output for equal input', () => {
    fc.assert(
      fc.property(trajectoryArb, (t) => {
        const copy = structuredClone(t);
        const first = serialize(runChecks(deepFreeze(t), cfg));
        expect(serialize(runChecks(copy, cfg))).toBe(first);
        expect(serialize(runChecks(t, cfg))).toBe(first);
      }),
      { numRuns: 300 },
    );
  });

  it('is insensitive to the key order of JSON arguments', () => {
    // Some generated trajectory must change under reordering, or the property says nothing.
    let changed = 0;
    const reorder = (raw: string): string => {
      try {
        const value = JSON.parse(raw) as unknown;
        if (value === null || typeof value !== 'object' || Array.isArray(value)) return raw;
        return JSON.stringify(Object.fromEntries(Object.entries(value).reverse()), null, 1);
      } catch {
        return raw;
      }
    };
    fc.assert(
      fc.property(trajectoryArb, (t) => {
        const reordered = {
          ...t,
          // Normalized again from the reordered text, as a span with those arguments would be:
          // digest and parsed value come from the new text, not carried over from the old one.
          steps: t.steps.map((s) => (s.args === undefined ? s : { ...s, args: toToolArgs(reorder(s.args.raw), s.args.declared) })),
        };
        if (reordered.steps.some((s, i) => s.args !== undefined && s.args.raw !== t.steps[i]!.args!.raw)) changed++;
        expect(serialize(runChecks(reordered, cfg))).toBe(serialize(runChecks(t, cfg)));
      }),
      { numRuns: 200, seed: 14 },
    );
    expect(changed).toBeGreaterThan(50);
  });

  it('keeps its invariants: one hit per pattern and anchor, groups of two or more, absence only when complete', () => {
    fc.assert(
      fc.property(trajectoryArb, (t) => {
        const { l0, repetition } = runChecks(t, cfg);
        const keys = l0.map((h) => `${h.pattern} ${h.anchor}`);
        expect(new Set(keys).size).toBe(keys.length);
        for (const h of l0) {
          expect(L0_PATTERNS).toContain(h.pattern);
          expect(h.evidence[0]!.spanId).toBe(h.anchor);
        }
        if (repetition.status === 'observed') {
          for (const g of repetition.groups) {
            expect(g.count).toBeGreaterThanOrEqual(2);
            expect(g.attempts).toHaveLength(g.count);
          }
        }
        if (repetition.status === 'none-observed') expect(t.complete).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
