import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { outOfOrderGate } from '../../src/checks/out-of-order-gate.ts';
import { step, tool, trajectory } from './builders.ts';

const cfg = defaultChecksConfig;

describe('out-of-order-gate', () => {
  it('fires on a gate that ran after the unguarded send it should have guarded', () => {
    const send = tool('deploy_service', { at: 1 });
    const gate = tool('confirm_with_user', { at: 3 });
    const hits = outOfOrderGate(trajectory([send, gate]), cfg);
    expect(hits).toEqual([
      {
        pattern: 'out-of-order-gate',
        anchor: gate.id,
        detail: `gate tool "confirm_with_user" ran after outbound tool "deploy_service" (span ${send.id}), which had no successful gate before it`,
        evidence: [
          { traceId: gate.traceId, spanId: gate.id },
          { traceId: send.traceId, spanId: send.id },
        ],
      },
    ]);
  });

  it('stays silent on a second gate after a send that was guarded', () => {
    const steps = [tool('approve_deploy', { at: 1 }), tool('deploy_service', { at: 3 }), tool('verify_deploy', { at: 5 })];
    expect(outOfOrderGate(trajectory(steps), cfg)).toEqual([]);
  });

  it('stays silent on a gate before any send', () => {
    const steps = [tool('validate_input', { at: 1 }), tool('web_search', { at: 2 })];
    expect(outOfOrderGate(trajectory(steps), cfg)).toEqual([]);
  });

  it('pairs a gate with the latest send before it', () => {
    const early = tool('send_sms', { at: 1 });
    const approve = tool('approve', { at: 3, end: 4 });
    const late = tool('send_email', { at: 5 });
    const check = tool('check_delivery', { at: 7 });
    // approve came after the unguarded early send; check came after late, which approve guarded.
    expect(outOfOrderGate(trajectory([early, approve, late, check]), cfg).map((h) => h.anchor)).toEqual([approve.id]);
  });

  it('says nothing about an incomplete capture', () => {
    const t = trajectory([tool('deploy_service', { at: 1 }), tool('confirm_with_user', { at: 3 })], {
      complete: false,
      incompleteReasons: ['root-not-seen'],
    });
    expect(outOfOrderGate(t, cfg)).toEqual([]);
  });

  it('stays silent when a nameless tool step may have been a gate before the send', () => {
    const steps = [step('tool', { at: 0, name: 'execute_tool' }), tool('deploy_service', { at: 1 }), tool('confirm_with_user', { at: 3 })];
    expect(outOfOrderGate(trajectory(steps), cfg)).toEqual([]);
  });
});

describe('out-of-order-gate with used-up gates', () => {
  it('fires on a gate after a send that an earlier send to the same target left uncovered', () => {
    const steps = [
      tool('request_approval', { at: 1, end: 2 }),
      tool('send_email', { at: 3, args: '{"to":"a@x"}' }),
      tool('send_email', { at: 5, args: '{"to":"a@x"}' }),
      tool('confirm_with_user', { at: 7 }),
    ];
    expect(outOfOrderGate(trajectory(steps), cfg).map((h) => h.anchor)).toEqual([steps[3]!.id]);
  });
});
