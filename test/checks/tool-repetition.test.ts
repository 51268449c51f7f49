import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { toolRepetition } from '../../src/checks/tool-repetition.ts';
import { toToolArgs } from '../../src/normalize/tool-args.ts';
import { conflictOn, step, tool, trajectory } from './builders.ts';

const ref = (s: { traceId: string; id: string }) => ({ traceId: s.traceId, spanId: s.id });

describe('exact tool repetition', () => {
  it('groups calls whose args differ only in key order and whitespace', () => {
    const a = tool('web_search', { at: 1, args: '{"query": "x", "year": 2021}' });
    const b = tool('web_search', { at: 2, args: '{"year":2021.0,"query":"x"}' });
    const c = tool('web_search', { at: 3, args: '{"query": "y", "year": 2021}' });
    const obs = toolRepetition(trajectory([a, b, c]));
    expect(obs).toEqual({
      status: 'observed',
      complete: true,
      groups: [{ toolName: 'web_search', argsDigest: toToolArgs('{"query":"x","year":2021}').digest, count: 2, attempts: [ref(a), ref(b)] }],
    });
  });

  it('keeps different tools and non-JSON text apart, comparing text exactly', () => {
    const steps = [tool('shell', { at: 1, args: 'ls  -la' }), tool('shell', { at: 2, args: 'ls -la' }), tool('other', { at: 3, args: 'ls -la' })];
    expect(toolRepetition(trajectory(steps))).toEqual({ status: 'none-observed' });
  });

  it('lists groups in trajectory order of their first attempt, attempts in order', () => {
    const b1 = tool('b', { at: 1, args: '{}' });
    const a1 = tool('a', { at: 2, args: '{}' });
    const b2 = tool('b', { at: 3, args: '{}' });
    const a2 = tool('a', { at: 4, args: '{}' });
    const b3 = tool('b', { at: 5, args: '{}' });
    const obs = toolRepetition(trajectory([a2, b3, a1, b1, b2]));
    expect(obs.status === 'observed' && obs.groups.map((g) => [g.toolName, g.count, g.attempts.map((x) => x.spanId)])).toEqual([
      ['b', 3, [b1.id, b2.id, b3.id]],
      ['a', 2, [a1.id, a2.id]],
    ]);
  });

  it('counts a duplicate export of one span once (runChecks keeps the first copy)', () => {
    const a = tool('fetch', { at: 1, args: '{"u": 1}' });
    expect(runChecks(trajectory([a, { ...a }]), defaultChecksConfig).repetition).toEqual({ status: 'none-observed' });
    const b = tool('fetch', { at: 2, args: '{"u": 1}' });
    const obs = runChecks(trajectory([a, { ...a }, b]), defaultChecksConfig).repetition;
    expect(obs.status === 'observed' && obs.groups[0]!.count).toBe(2);
  });

  it('refuses a span under a capture conflict: not counted, named, and absence unavailable', () => {
    const a = tool('fetch', { at: 1, args: '{"u": 1}' });
    const b = tool('fetch', { at: 2, args: '{"u": 1}' });
    expect(toolRepetition(trajectory([a, b], { conflicts: [conflictOn(b)] }))).toEqual({
      status: 'unavailable',
      reasons: ['capture-conflict'],
      excluded: [{ traceId: b.traceId, spanId: b.id, reason: 'capture-conflict' }],
    });
    const c = tool('fetch', { at: 3, args: '{"u": 1}' });
    const obs = toolRepetition(trajectory([a, b, c], { conflicts: [conflictOn(b)] }));
    expect(obs).toMatchObject({ status: 'observed', complete: false, excluded: [{ spanId: b.id }] });
    expect(obs.status === 'observed' && obs.groups[0]!.attempts).toEqual([ref(a), ref(c)]);
  });

  it('from an incomplete capture: repetition is observed, absence is unavailable with the reasons', () => {
    const a = tool('fetch', { at: 1, args: '{}' });
    const b = tool('fetch', { at: 2, args: '{}' });
    const spec = { complete: false, incompleteReasons: ['orphan-parents' as const, 'idle-timeout' as const] };
    expect(toolRepetition(trajectory([a, b], spec))).toMatchObject({ status: 'observed', complete: false });
    expect(toolRepetition(trajectory([a], spec))).toEqual({ status: 'unavailable', reasons: ['orphan-parents', 'idle-timeout'] });
  });

  it('never groups calls whose args were not captured, and then cannot claim absence', () => {
    const steps = [tool('fetch', { at: 1 }), tool('fetch', { at: 2 })];
    expect(toolRepetition(trajectory(steps))).toEqual({ status: 'unavailable', reasons: ['tool-args-not-captured'] });
  });

  it('cannot claim absence when a tool call carries no tool name (it may repeat another)', () => {
    const { toolName: _, ...unnamed } = tool('fetch', { at: 2, args: '{"u": 1}' });
    const steps = [tool('fetch', { at: 1, args: '{"u": 1}' }), unnamed];
    expect(toolRepetition(trajectory(steps))).toEqual({ status: 'unavailable', reasons: ['tool-name-not-captured'] });
  });

  it('cannot claim absence when the model requested a tool call that has no tool span', () => {
    const asked = step('llm', {
      at: 0,
      requestedToolCalls: [
        { id: 'call_1', name: 'fetch' },
        { id: 'call_2', name: 'fetch' },
      ],
    });
    const steps = [asked, tool('fetch', { at: 1, args: '{"u": 1}', toolCallId: 'call_1', result: 'ok' })];
    expect(toolRepetition(trajectory(steps))).toEqual({ status: 'unavailable', reasons: ['tool-call-not-captured'] });
    expect(toolRepetition(trajectory(steps.slice(1)))).toEqual({ status: 'none-observed' });
  });
});

describe('exact tool repetition of recorded calls', () => {
  it('compares the call however it was wrapped: OpenLLMetry, LlamaIndex and smolagents records of one call are equal', () => {
    const a = tool('get_weather', { at: 1, convention: 'openllmetry', args: '{"args": [], "kwargs": {"city": "Paris"}}' });
    const b = tool('get_weather', { at: 2, convention: 'openinference', args: '{"kwargs": {"city": "Paris"}}' });
    const c = tool('get_weather', { at: 3, convention: 'openinference', args: '{"args": [], "sanitize_inputs_outputs": true, "kwargs": {"city": "Paris"}}' });
    const d = tool('get_weather', { at: 4, args: '{"city": "Paris"}' });
    const e = tool('get_weather', { at: 5, convention: 'openllmetry', args: '{"args": [], "kwargs": {"city": "Rome"}}' });
    expect(toolRepetition(trajectory([a, b, c, d, e]))).toEqual({
      status: 'observed',
      complete: true,
      groups: [{ toolName: 'get_weather', argsDigest: toToolArgs('{"city":"Paris"}').digest, count: 4, attempts: [ref(a), ref(b), ref(c), ref(d)] }],
    });
  });

  it('keeps a call with positional arguments apart from the same values by name', () => {
    const positional = tool('get_weather', { at: 1, convention: 'openllmetry', args: '{"args": ["Paris"], "kwargs": {}}' });
    const named = tool('get_weather', { at: 2, convention: 'openllmetry', args: '{"args": [], "kwargs": {"city": "Paris"}}' });
    expect(toolRepetition(trajectory([positional, named]))).toEqual({ status: 'none-observed' });
  });
});
