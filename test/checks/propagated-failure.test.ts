import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { errorOutput } from '../../src/checks/error-output.ts';
import { failurePropagations, sameFailure } from '../../src/checks/propagated-failure.ts';
import { compiledRules } from '../../src/checks/rules.ts';
import { stepFailures, type StepFailure } from '../../src/checks/step-failure.ts';
import type { StepError } from '../../src/normalize/step.ts';
import { step, type StepSpec, trajectory } from './builders.ts';

const cfg = defaultChecksConfig;

const exc = (type: string | undefined, text: string): StepFailure => (type === undefined ? { source: 'exception', text } : { source: 'exception', type, text });

describe('sameFailure: does an outer error state the inner failure?', () => {
  it('smolagents: the wrapper quotes the tool exception as `Type: message`', () => {
    const inner = exc('matrix_common.OrderServiceUnavailable', 'order service timed out after 30s');
    const outer = exc(
      'smolagents.utils.AgentToolExecutionError',
      "Error executing tool 'lookup_order' with arguments {'order_id': '42'}: OrderServiceUnavailable: order service timed out after 30s\nPlease try again or use another tool",
    );
    expect(sameFailure(outer, inner, 24)).toBe(true);
  });

  it('a multi-line inner text is matched whole, or by a distinctive first line', () => {
    const traceback = 'Traceback (most recent call last):\n  File "x.py", line 3\nKeyError: \'id\'';
    expect(sameFailure(exc('E', `step failed: ${traceback}`), exc(undefined, traceback), 24)).toBe(true);
    // Only the header in common: every Python traceback starts so, it names no failure.
    const other = 'Traceback (most recent call last):\n  File "y.py", line 9\nValueError: bad';
    expect(sameFailure(exc('E', other), exc(undefined, traceback), 24)).toBe(false);
    const stacked = 'order service timed out after 30s\n    at lookupOrder (tools.ts:17:9)';
    expect(sameFailure(exc('ToolError', 'tool failed: order service timed out after 30s'), exc('Error', stacked), 24)).toBe(true);
  });

  it('the distinctiveness bound is the configured one', () => {
    const inner = exc(undefined, 'disk quota exceeded');
    const outer = exc('UploadError', 'upload aborted: disk quota exceeded');
    expect(sameFailure(outer, inner, 24)).toBe(false);
    expect(sameFailure(outer, inner, 16)).toBe(true);
  });

  it('no inner text, or no outer text, is never a text match', () => {
    expect(sameFailure({ source: 'status' }, exc('E', 'x'.repeat(40)), 24)).toBe(false);
    expect(sameFailure(exc('E', 'x'.repeat(40)), { source: 'status', type: 'E' }, 24)).toBe(false);
  });

  it('identical text agrees unless a short text comes under two different types', () => {
    expect(sameFailure(exc('KeyError', "'id'"), exc('KeyError', "'id'"), 24)).toBe(true);
    expect(sameFailure(exc(undefined, "'id'"), exc('KeyError', "'id'"), 24)).toBe(true);
    expect(sameFailure(exc('ValueError', "'id'"), exc('KeyError', "'id'"), 24)).toBe(false);
    expect(sameFailure(exc('builtins.KeyError', "'id'"), exc('KeyError', "'id'"), 24)).toBe(true);
  });
});

describe('failurePropagations over random span trees', () => {
  const MESSAGES = [
    undefined,
    "'id'",
    'order service timed out after 30s',
    "Error executing tool 'lookup_order': OrderServiceUnavailable: order service timed out after 30s",
    'Reached max steps.',
  ];
  const TYPES = [undefined, 'KeyError', 'OrderServiceUnavailable', 'smolagents.utils.AgentToolExecutionError', '_OTHER'];
  const treeArb = fc.array(
    fc.record({
      parent: fc.nat(),
      hasParent: fc.constantFrom(true, true, true, false),
      nested: fc.boolean(),
      failed: fc.constantFrom(true, true, false),
      message: fc.constantFrom(...MESSAGES),
      type: fc.constantFrom(...TYPES),
      at: fc.integer({ min: 0, max: 20 }),
      length: fc.integer({ min: 0, max: 8 }),
    }),
    { maxLength: 20 },
  );

  it('every failed step is in exactly one error-output hit, anchored at the innermost failure of its chain', () => {
    fc.assert(
      fc.property(treeArb, (specs) => {
        const ids = specs.map((_, i) => `d${i.toString(16).padStart(15, '0')}`);
        const spans: { at: number; end: number }[] = [];
        const steps = specs.map((s, i) => {
          // Mostly nested in time inside the parent, as real spans are; sometimes outliving it.
          const p = s.hasParent && i > 0 ? s.parent % i : undefined;
          const base = p === undefined ? { at: 0, end: 40 } : spans[p]!;
          const at = s.nested ? base.at + (s.at % Math.max(1, base.end - base.at)) : s.at;
          const end = s.nested ? Math.min(base.end, at + s.length) : at + s.length;
          spans.push({ at, end });
          const spec: StepSpec = { id: ids[i]!, at, end };
          if (p !== undefined) spec.parentId = ids[p]!;
          if (s.failed) {
            const error: StepError = { source: 'exception' };
            if (s.type !== undefined) error.type = s.type;
            if (s.message !== undefined) error.message = s.message;
            Object.assign(spec, { statusCode: 2, eventNames: ['exception'], error });
          }
          return step('other', spec);
        });
        const t = trajectory(steps);
        const failures = stepFailures(t, compiledRules(cfg));
        const links = failurePropagations(t, cfg);
        const hits = errorOutput(t, cfg);
        const counted = hits.flatMap((h) => h.evidence.map((e) => e.spanId));
        const failed = t.steps.filter((_, i) => failures[i] !== undefined).map((s) => s.id);
        expect([...counted].sort()).toEqual([...failed].sort());
        for (const [i, link] of links.entries()) {
          if (link === undefined) continue;
          // A propagation links a failed step to a failed step inside it that ended no later.
          expect(failures[i]).toBeDefined();
          expect(failures[link.from]).toBeDefined();
          expect(t.steps[link.from]!.endTimeUnixNano <= t.steps[i]!.endTimeUnixNano).toBe(true);
          expect(links[link.origin]).toBeUndefined();
          expect(hits.some((h) => h.anchor === t.steps[link.origin]!.id && h.evidence.some((e) => e.spanId === t.steps[i]!.id))).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('sameFailure: a quote is whole', () => {
  it('not inside a longer word, and a short `Type: line` ends its sentence', () => {
    const inner = exc('Error', 'x');
    expect(sameFailure(exc('E', 'failed: Error: x\n    at run (a.js:1:1)'), inner, 24)).toBe(true);
    expect(sameFailure(exc('E', 'failed: Error: x.'), inner, 24)).toBe(true);
    expect(sameFailure(exc('E', 'failed: Error: xyz'), inner, 24)).toBe(false);
    expect(sameFailure(exc('E', 'failed: MyError: x'), inner, 24)).toBe(false);
    const timeout = exc('TimeoutError', 'timed out');
    expect(sameFailure(exc('E', 'upload: TimeoutError: timed out after the retry'), timeout, 24)).toBe(false);
    expect(sameFailure(exc('E', 'upload: pkg.TimeoutError: timed out'), timeout, 24)).toBe(true);
  });

  it('a distinctive text may be followed by more words, not glued to them', () => {
    const inner = exc(undefined, 'connection refused by host');
    expect(sameFailure(exc('E', 'fetch failed: connection refused by host (attempt 3)'), inner, 24)).toBe(true);
    expect(sameFailure(exc('E', 'fetch failed: connection refused by hosts b and c'), inner, 24)).toBe(false);
  });
});
