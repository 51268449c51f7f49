import { describe, expect, it } from 'vitest';
import { compiledRules } from '../../src/checks/rules.ts';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { agentRuns, unreadableOutcomes } from '../../src/checks/run-outcome.ts';
import { stepFailures } from '../../src/checks/step-failure.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import type { Step } from '../../src/normalize/step.ts';
import { agent, failedTool, step, tool, trajectory } from './builders.ts';

const under = (parent: Step) => ({ parentId: parent.id, traceId: parent.traceId });
const runsOf = (t: Trajectory) => agentRuns(t, stepFailures(t, compiledRules(defaultChecksConfig)));
const state = (...messages: object[]) => JSON.stringify({ messages });

describe('agentRuns: the runs of a trajectory and what each reported', () => {
  it("counts LangGraph agent nodes under one root as one run, answered by the root's state", () => {
    const root = step('other', { name: 'LangGraph', at: 0, end: 20, result: state({ type: 'human', content: 'q' }, { type: 'ai', content: 'Final.' }) });
    const n1 = agent(state({ type: 'ai', content: '', tool_calls: [{ id: 'a' }] }), { at: 1, name: 'agent', ...under(root) });
    const t1 = tool('search', { at: 3, args: '{}', ...under(root) });
    const n2 = agent(state({ type: 'ai', content: 'Final.' }), { at: 5, name: 'agent', ...under(root) });
    const t = trajectory([root, n1, t1, n2]);
    const { runs, runOf } = runsOf(t);
    expect(runs).toHaveLength(1);
    expect(t.steps[runs[0]!.final]!.id).toBe(n2.id);
    expect(runs[0]!.outcome).toEqual({ kind: 'answer', text: 'Final.', from: t.steps.indexOf(root), source: 'root-output' });
    expect(new Set(runOf)).toEqual(new Set([0]));
  });

  it("reads the root's state before the last agent's output, and that output when the root records none", () => {
    const root = step('other', { at: 0, end: 20, result: state({ role: 'user', content: 'q' }, { role: 'assistant', content: 'From state.' }) });
    const worker = agent('Sub-answer to the supervisor.', { at: 1, agentName: 'researcher', ...under(root) });
    expect(runsOf(trajectory([root, worker])).runs[0]!.outcome).toMatchObject({ kind: 'answer', text: 'From state.', source: 'root-output' });
    const bare = step('other', { at: 0, end: 20 });
    const only = agent('Agent answer.', { at: 1, ...under(bare) });
    expect(runsOf(trajectory([bare, only])).runs[0]!.outcome).toMatchObject({ kind: 'answer', text: 'Agent answer.', source: 'agent-output' });
  });

  it('names why an outcome is absent instead of guessing', () => {
    const silent = agent(undefined, { at: 0, end: 9 });
    expect(runsOf(trajectory([silent, failedTool('x', 'boom', { at: 1, ...under(silent) })])).runs[0]!.outcome).toEqual({
      kind: 'absent',
      reason: 'no-output-captured',
    });
    const pending = agent(JSON.stringify([{ role: 'assistant', parts: [{ type: 'tool_call', name: 'x' }] }]), { at: 0, end: 9 });
    expect(runsOf(trajectory([pending])).runs[0]!.outcome).toEqual({ kind: 'absent', reason: 'tool-calls-pending' });
    const failed = agent('partial', { at: 0, end: 9, statusCode: 2, error: { source: 'status' } });
    expect(runsOf(trajectory([failed])).runs[0]!).toMatchObject({ failed: true, outcome: { kind: 'absent', reason: 'run-failed' } });
  });

  it('does not take the last model reply as the answer when a tool ran after it', () => {
    const root = agent(undefined, { at: 0, end: 20 });
    const llm = step('llm', { at: 1, end: 2, result: 'Let me check.', ...under(root) });
    const later = tool('search', { at: 3, args: '{}', ...under(root) });
    expect(runsOf(trajectory([root, llm, later])).runs[0]!.outcome).toEqual({ kind: 'absent', reason: 'no-output-captured' });
  });

  it('makes each trace of a session its own run, and joins a parentless step to the run whose span encloses it', () => {
    const turn1 = agent('one', { at: 0, end: 5 });
    const orphan = tool('search', { at: 1, args: '{}', parentId: 'ffffffffffffffff' });
    const turn2 = agent('two', { at: 10, end: 15, traceId: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' });
    const t = { ...trajectory([turn1, orphan, turn2]), traceIds: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'] };
    const { runs, runOf } = runsOf(t);
    expect(runs.map((r) => (r.outcome.kind === 'answer' ? r.outcome.text : r.outcome.reason))).toEqual(['one', 'two']);
    expect(runOf[t.steps.indexOf(orphan)]).toBe(runOf[t.steps.indexOf(turn1)]);
  });
});

describe('unreadableOutcomes', () => {
  it('lists the runs whose answer the capture does not show, not the runs that failed', () => {
    const silent = agent(undefined, { at: 0, end: 5 });
    const failed = agent('x', { at: 10, end: 15, traceId: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', statusCode: 2, error: { source: 'status' } });
    const answered = agent('ok', { at: 20, end: 25, traceId: 'cccccccccccccccccccccccccccccccc' });
    const t = { ...trajectory([silent, failed, answered]), traceIds: ['a', 'b', 'c'].map((c) => c.repeat(32)) };
    expect(unreadableOutcomes(t, runsOf(t))).toEqual([{ traceId: silent.traceId, spanId: silent.id, reason: 'no-output-captured' }]);
  });
});

describe('agentRuns on malformed parenting', () => {
  it('ends a parent cycle instead of looping, and still reads one run', () => {
    const a = agent('answer', { at: 0, end: 9, id: '00000000000000a1', parentId: '00000000000000b2' });
    const b = tool('search', { at: 1, args: '{}', id: '00000000000000b2', parentId: '00000000000000a1' });
    const self = tool('loop', { at: 2, args: '{}', id: '00000000000000c3', parentId: '00000000000000c3' });
    const { runs, runOf } = runsOf(trajectory([a, b, self]));
    expect(runOf).toHaveLength(3);
    expect(runs.length).toBeGreaterThanOrEqual(1);
  });
});

describe('agentRuns on a trace whose parenting was lost', () => {
  it("keeps the steps of one trace in one run, its agent the final step, a top tool's result never the answer", () => {
    const bad = failedTool('search', 'upstream 503', { at: 1 });
    const answer = agent('The answer is 185', { at: 5, end: 6 });
    const flat = trajectory([bad, answer]);
    const { runs } = runsOf(flat);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.outcome).toMatchObject({ kind: 'answer', text: 'The answer is 185', source: 'agent-output' });

    const lone = tool('search', { at: 1, args: '{}', result: 'Here are 3 results' });
    const later = step('other', { at: 3, parentId: 'ffffffffffffffff' });
    expect(runsOf(trajectory([lone, later])).runs[0]!.outcome).toEqual({ kind: 'absent', reason: 'no-output-captured' });
  });
});
