import { describe, expect, it } from 'vitest';
import { defaultChecksConfig, parseChecksConfig } from '../../src/checks/config.ts';
import { unguardedSend } from '../../src/checks/unguarded-send.ts';
import { agent, failedTool, step, tool, trajectory } from './builders.ts';

const cfg = defaultChecksConfig;

describe('unguarded-send', () => {
  it('fires on an outbound tool with no gate before it, in any naming style', () => {
    const sends = [tool('send_email', { at: 1 }), tool('createPayment', { at: 2 }), tool('git-merge', { at: 3 })];
    const hits = unguardedSend(trajectory([agent('ok', { at: 0, end: 9 }), ...sends]), cfg);
    expect(hits.map((h) => [h.anchor, h.detail])).toEqual([
      [sends[0]!.id, 'outbound tool "send_email" ran with no successful gate before it'],
      [sends[1]!.id, 'outbound tool "createPayment" ran with no successful gate before it'],
      [sends[2]!.id, 'outbound tool "git-merge" ran with no successful gate before it'],
    ]);
  });

  it('stays silent when a successful gate ended before the send', () => {
    const steps = [tool('request_approval', { at: 1, end: 2 }), tool('send_email', { at: 3 })];
    expect(unguardedSend(trajectory(steps), cfg)).toEqual([]);
  });

  it('stays silent on reads named after what they read, and on tools outside the class', () => {
    const steps = [tool('get_post', { at: 1 }), tool('search_email', { at: 2 }), tool('web_search', { at: 3 })];
    expect(unguardedSend(trajectory(steps), cfg)).toEqual([]);
  });

  it('does not count a failed gate, nor one still running when the send started', () => {
    const failedGate = failedTool('human_review', 'reviewer unavailable', { at: 1, end: 2 });
    const overlapping = tool('verify_recipient', { at: 2, end: 5 });
    const send = tool('send_email', { at: 3 });
    const hits = unguardedSend(trajectory([failedGate, overlapping, send]), cfg);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.detail).toBe('outbound tool "send_email" ran with no successful gate before it (gates before it failed: tool "human_review")');
    expect(hits[0]!.evidence.map((e) => e.spanId)).toEqual([send.id, failedGate.id]);
  });

  it('treats a reviewer agent as a gate', () => {
    const reviewer = agent('approved', { at: 1, end: 2, agentName: 'code_reviewer' });
    expect(unguardedSend(trajectory([reviewer, tool('merge_pull_request', { at: 3 })]), cfg)).toEqual([]);
  });

  it('says nothing about an incomplete capture: the gate may just not have been captured', () => {
    const t = trajectory([tool('send_email', { at: 1 })], { complete: false, incompleteReasons: ['orphan-parents'] });
    expect(unguardedSend(t, cfg)).toEqual([]);
  });

  it('follows configured classes', () => {
    const custom = parseChecksConfig({ outbound: { include: ['^wire_funds$'] }, gates: { include: ['^four_eyes$'] } }, 'test');
    const steps = [tool('send_email', { at: 1 }), tool('four_eyes', { at: 2 }), tool('wire_funds', { at: 4 })];
    expect(unguardedSend(trajectory(steps), custom)).toEqual([]);
    expect(unguardedSend(trajectory([tool('wire_funds', { at: 1 })]), custom)).toHaveLength(1);
  });
});

describe('tool class precedence', () => {
  it('gives a name in both classes to the class it names first; a tie goes outbound', () => {
    const gateFirst = tool('approve_email', { at: 1, end: 2 });
    const send = tool('send_for_review', { at: 3 });
    const hits = unguardedSend(trajectory([gateFirst, send]), cfg);
    expect(hits).toEqual([]);
    expect(unguardedSend(trajectory([tool('send_for_review', { at: 1 })]), cfg).map((h) => h.detail)).toEqual([
      'outbound tool "send_for_review" ran with no successful gate before it',
    ]);
  });

  it('stays silent when a capture gap may hide the gate: a nameless tool step, a requested call with no tool span', () => {
    const send = tool('send_email', { at: 3 });
    const nameless = step('tool', { at: 1, end: 2, name: 'execute_tool' });
    expect(unguardedSend(trajectory([nameless, send]), cfg)).toEqual([]);
    const asked = step('llm', { at: 0, end: 1, requestedToolCalls: [{ name: 'request_approval' }, { name: 'send_email' }] });
    expect(unguardedSend(trajectory([asked, send]), cfg)).toEqual([]);
    // answered requests, unanswered ones that cannot be a gate by their name, and tool steps
    // without arguments or results hide no gate
    const answered = step('llm', { at: 0, end: 1, requestedToolCalls: [{ name: 'send_email' }, { id: 'call_f', name: 'final_answer' }] });
    expect(unguardedSend(trajectory([answered, send]), cfg).map((h) => h.anchor)).toEqual([send.id]);
  });
});
