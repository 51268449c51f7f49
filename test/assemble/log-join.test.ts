/**
 * Content events carried by OTLP log records join the step of the span they name while its
 * trajectory is open, whatever the arrival order; every other fate is counted and, where it
 * means the capture lacks something, named on the trajectory.
 */
import { describe, expect, it } from 'vitest';
import { Assembler } from '../../src/assemble/assembler.ts';
import { AssemblerLimitsSchema, type AssemblerLimits } from '../../src/assemble/limits.ts';
import type { HeldEvent } from '../../src/assemble/log-join.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { makeStep } from '../helpers/steps.ts';

const T = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

function setup(overrides: Partial<AssemblerLimits> = {}) {
  const closed: Trajectory[] = [];
  const limits = AssemblerLimitsSchema.parse({ quietPeriodMs: 2_000, idleTimeoutMs: 30_000, ...overrides });
  return { closed, assembler: new Assembler(limits, (t) => closed.push(t)) };
}

/** Strands' tool-call input event as a log record body (OpenAI-v2 style). */
const toolInput = (args: string, time = 1n): HeldEvent => ({
  name: 'gen_ai.tool.message',
  attributes: {},
  body: { content: args, id: 'call-1' },
  timeUnixNano: time,
});
const toolResult = (text: string): HeldEvent => ({ name: 'gen_ai.choice', attributes: {}, body: { message: text }, timeUnixNano: 2n });

const toolStep = () => makeStep({ id: 't1', parentId: 'r1', kind: 'tool', toolName: 'search', convention: 'genai' });

describe('joining log-carried content events to steps', () => {
  it('a record arriving before its span (the usual order) is held and fills the step at close', () => {
    const { closed, assembler } = setup();
    assembler.addContentEvent(T, 't1', toolInput('{"q":"paris"}'), 50, 0);
    assembler.addContentEvent(T, 't1', toolResult('found'), 50, 0);
    expect(assembler.stats().bufferedBytes).toBe(100);
    assembler.add(toolStep(), 10);
    assembler.add(makeStep({ id: 'r1' }), 10);
    assembler.advance(10_000);
    const step = closed[0]!.steps.find((s) => s.id === 't1')!;
    expect(step.args?.parsed).toEqual({ q: 'paris' });
    expect(step.toolCallId).toBe('call-1');
    expect(step.result).toBe('found');
    expect(closed[0]!.complete).toBe(true);
    expect(assembler.stats().contentEvents).toMatchObject({ held: 2, joined: 2, spanMissing: 0 });
    expect(assembler.stats().bufferedBytes).toBe(0);
  });

  it('a record arriving after its span, trajectory still open, joins the same way', () => {
    const { closed, assembler } = setup();
    assembler.add(toolStep(), 0);
    assembler.add(makeStep({ id: 'r1' }), 0);
    assembler.addContentEvent(T, 't1', toolInput('{"q":1}'), 50, 500);
    assembler.advance(10_000);
    expect(closed[0]!.steps.find((s) => s.id === 't1')!.args?.parsed).toEqual({ q: 1 });
  });

  it('never overwrites a fact the span carried, and counts the record as no news', () => {
    const { closed, assembler } = setup();
    const step = toolStep();
    step.result = 'from attributes';
    assembler.add(step, 0);
    assembler.add(makeStep({ id: 'r1' }), 0);
    assembler.addContentEvent(T, 't1', toolResult('from a log'), 50, 0);
    assembler.advance(10_000);
    expect(closed[0]!.steps.find((s) => s.id === 't1')!.result).toBe('from attributes');
    expect(assembler.stats().contentEvents).toMatchObject({ joined: 0, noNewFacts: 1 });
  });

  it('a record whose span never arrives marks the trajectory content-without-span and is counted', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r1' }), 0);
    assembler.addContentEvent(T, 'never-came', toolInput('{}'), 50, 0);
    assembler.advance(10_000);
    expect(closed[0]!.incompleteReasons).toContain('content-without-span');
    expect(closed[0]!.complete).toBe(false);
    expect(assembler.stats().contentEvents.spanMissing).toBe(1);
  });

  it('a record for a closed trajectory with retained steps opens its next revision, carrying the fact', () => {
    const { closed, assembler } = setup();
    assembler.add(toolStep(), 0);
    assembler.add(makeStep({ id: 'r1' }), 0);
    assembler.advance(10_000);
    expect(closed[0]!.steps.find((s) => s.id === 't1')!.args).toBeUndefined();
    assembler.addContentEvent(T, 't1', toolInput('{"late":true}'), 50, 11_000);
    assembler.advance(20_000);
    expect(closed).toHaveLength(2);
    expect(closed[1]!.revision).toBe(2);
    expect(closed[1]!.steps.find((s) => s.id === 't1')!.args?.parsed).toEqual({ late: true });
    // the step emitted in revision 1 is not changed behind its back
    expect(closed[0]!.steps.find((s) => s.id === 't1')!.args).toBeUndefined();
    expect(assembler.stats().contentEvents.late).toBe(1);
    expect(assembler.stats().lateSpans).toBe(0);
  });

  it('a late record that adds nothing (an exporter resend) opens no revision', () => {
    const { closed, assembler } = setup();
    assembler.addContentEvent(T, 't1', toolInput('{"q":1}'), 50, 0);
    assembler.add(toolStep(), 0);
    assembler.add(makeStep({ id: 'r1' }), 0);
    assembler.advance(10_000);
    assembler.addContentEvent(T, 't1', toolInput('{"q":1}'), 50, 11_000);
    assembler.advance(20_000);
    expect(closed).toHaveLength(1);
    expect(assembler.stats().contentEvents).toMatchObject({ noNewFacts: 1, late: 0 });
  });

  it('a late record whose trajectory steps were let go opens a revision that says so', () => {
    const { closed, assembler } = setup({ maxRetainedBytes: 0 });
    assembler.add(makeStep({ id: 'r1' }), 0);
    assembler.advance(10_000);
    assembler.addContentEvent(T, 'r1', toolInput('{}'), 50, 11_000);
    assembler.advance(50_000);
    expect(closed[1]!.incompleteReasons).toEqual(expect.arrayContaining(['previous-revision-not-retained', 'content-without-span']));
  });

  it('an exact resend of a held record is held once', () => {
    const { closed, assembler } = setup();
    assembler.addContentEvent(T, 't1', { name: 'gen_ai.user.message', attributes: {}, body: { content: 'hi' }, timeUnixNano: 5n }, 50, 0);
    assembler.addContentEvent(T, 't1', { name: 'gen_ai.user.message', attributes: {}, body: { content: 'hi' }, timeUnixNano: 5n }, 50, 0);
    assembler.add(makeStep({ id: 't1', kind: 'llm' }), 0);
    assembler.advance(10_000);
    expect(JSON.parse(String(closed[0]!.steps[0]!.input))).toEqual([{ role: 'user', content: 'hi' }]);
    expect(assembler.stats().contentEvents).toMatchObject({ held: 1, duplicate: 1 });
  });

  it('records held under the trace follow it into its session when its first span names one', () => {
    const { closed, assembler } = setup();
    assembler.addContentEvent(T, 't1', toolInput('{"q":2}'), 50, 0);
    assembler.add(makeStep({ id: 'r1', sessionId: 'S' }), 0);
    assembler.add({ ...toolStep(), sessionId: 'S' }, 0);
    assembler.advance(10_000);
    expect(closed).toHaveLength(1);
    expect(closed[0]!.key).toBe('S');
    expect(closed[0]!.steps.find((s) => s.id === 't1')!.args?.parsed).toEqual({ q: 2 });
  });

  it('messages arriving as separate records become one input, in time order', () => {
    const { closed, assembler } = setup();
    const message = (content: string, time: bigint): HeldEvent => ({ name: 'gen_ai.user.message', attributes: {}, body: { content }, timeUnixNano: time });
    assembler.addContentEvent(T, 'l1', message('second', 20n), 10, 0);
    assembler.addContentEvent(T, 'l1', message('first', 10n), 10, 0);
    assembler.add(makeStep({ id: 'l1', kind: 'llm' }), 0);
    assembler.advance(10_000);
    expect(JSON.parse(String(closed[0]!.steps[0]!.input)).map((m: { content: string }) => m.content)).toEqual(['first', 'second']);
  });
});

describe('content whose span comes only after the close', () => {
  it('is kept with the closed trajectory and joins the step in the revision the late span opens', () => {
    const { closed, assembler } = setup();
    assembler.add(makeStep({ id: 'r1' }), 0);
    assembler.addContentEvent(T, 't1', toolInput('{"q":"late"}'), 50, 0);
    assembler.advance(10_000);
    expect(closed[0]!.incompleteReasons).toContain('content-without-span');
    assembler.add(toolStep(), 11_000);
    assembler.advance(20_000);
    expect(closed[1]!.revision).toBe(2);
    expect(closed[1]!.incompleteReasons).not.toContain('content-without-span');
    expect(closed[1]!.steps.find((s) => s.id === 't1')!.args?.parsed).toEqual({ q: 'late' });
  });
});
