import { describe, expect, it } from 'vitest';
import { refuseDemand } from '../../../src/assemble/request-admission.ts';
import { InflightBudget } from '../../../src/ingest/otlp/inflight-budget.ts';

describe('InflightBudget: charges held to the limit across requests', () => {
  it('refuses the charge that would pass the limit, charges nothing for it, and counts it', () => {
    const budget = new InflightBudget(100);
    const a = budget.open();
    const b = budget.open();
    expect(a.charge(60)).toBe(true);
    expect(b.charge(50)).toBe(false);
    expect([budget.usedBytes, b.bytes, budget.refusals]).toEqual([60, 0, 1]);
    expect(b.charge(40)).toBe(true);
    a.refund(20);
    expect(budget.usedBytes).toBe(80);
    a.release();
    a.release();
    expect(budget.usedBytes).toBe(40);
    expect(a.charge(1)).toBe(false);
    b.release();
    expect(budget.usedBytes).toBe(0);
  });
});

describe('refuseDemand: the assembler bounds counted with the request', () => {
  const limits = { maxOpenTrajectories: 10, maxBufferedBytes: 1_000 };
  it('refuses what would pass a bound beside what is held and reserved', () => {
    expect(refuseDemand({ openTrajectories: 5, bufferedBytes: 0 }, limits, { trajectories: 6, bytes: 1 })).toBe('max-open-trajectories');
    expect(refuseDemand({ openTrajectories: 5, bufferedBytes: 0 }, limits, { trajectories: 5, bytes: 1 })).toBeUndefined();
    expect(refuseDemand({ openTrajectories: 1, bufferedBytes: 0 }, limits, { trajectories: 5, bytes: 1 }, { trajectories: 5, bytes: 0 })).toBe(
      'max-open-trajectories',
    );
    expect(refuseDemand({ openTrajectories: 1, bufferedBytes: 900 }, limits, { trajectories: 1, bytes: 101 })).toBe('max-buffered-bytes');
  });
  it('takes a request larger than a bound alone when nothing else is held, so it is never refused for ever', () => {
    expect(refuseDemand({ openTrajectories: 0, bufferedBytes: 0 }, limits, { trajectories: 50, bytes: 5_000 })).toBeUndefined();
  });
});
