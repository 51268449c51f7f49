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

describe('what a gate covers: the sends after it until one repeats a target already sent under it', () => {
  const approve = (at: number) => tool('request_approval', { at, end: at + 1 });
  const email = (to: string, at: number, extra = '') => tool('send_email', { at, args: `{"to":"${to}"${extra}}` });
  const anchors = (steps: Parameters<typeof trajectory>[0]) => unguardedSend(trajectory(steps), cfg).map((h) => h.anchor);

  it('approve then send, and approve once / send once again and again: silent', () => {
    expect(anchors([approve(1), email('a@x', 3)])).toEqual([]);
    expect(anchors([approve(1), email('a@x', 3), approve(5), email('a@x', 7), approve(9), email('a@x', 11)])).toEqual([]);
  });

  it('one approval, then one send to each of several recipients: silent', () => {
    expect(anchors([approve(1), email('a@x', 3), email('b@x', 4), email('c@x', 5)])).toEqual([]);
  });

  it('a late send after an early gate that an earlier send to the same target used: fires', () => {
    const late = email('a@x', 20, ',"body":"again"');
    const hits = unguardedSend(trajectory([approve(1), email('a@x', 3), tool('web_search', { at: 10 }), late]), cfg);
    expect(hits.map((h) => h.anchor)).toEqual([late.id]);
    expect(hits[0]!.detail).toMatch(
      /^outbound tool "send_email" ran with no successful gate before it that an earlier send to the same target had not used \(span [0-9a-f]+\)$/,
    );
  });

  it('once used up, the gate covers nothing more until the next gate', () => {
    const steps = [approve(1), email('a@x', 3), email('a@x', 4), email('b@x', 5), approve(7), email('b@x', 9)];
    expect(anchors(steps)).toEqual([steps[2]!.id, steps[3]!.id]);
  });

  it('without a recipient argument the tool is the target: a second payment after one approval fires', () => {
    const pay = (amount: number, at: number) => tool('make_payment', { at, args: `{"amount":${amount}}` });
    const second = pay(20, 4);
    expect(anchors([tool('approve_payment', { at: 1, end: 2 }), pay(10, 3), second])).toEqual([second.id]);
  });

  it('a failed send does not use the gate up (a retry stays covered)', () => {
    const failed = failedTool('send_email', 'smtp timeout', { at: 3, args: '{"to":"a@x"}' });
    expect(anchors([approve(1), failed, email('a@x', 5)])).toEqual([]);
  });

  it('a send whose arguments were not captured never uses a gate up (its target is unknown)', () => {
    expect(anchors([approve(1), tool('send_email', { at: 3 }), tool('send_email', { at: 4 })])).toEqual([]);
  });

  it('reads the recipient inside a {"args": [], "kwargs": {...}} call', () => {
    const kw = (to: string, at: number) => tool('send_email', { at, args: `{"args":[],"kwargs":{"to":"${to}","body":"hi"}}` });
    const again = kw('a@x', 5);
    expect(anchors([approve(1), kw('a@x', 3), kw('b@x', 4), again])).toEqual([again.id]);
  });
});
