import { describe, expect, it } from 'vitest';
import { BudgetMeter, BudgetSchema } from '../../src/windows/budget.ts';

describe('judge budget', () => {
  it('defers beyond calls per minute and admits again once the minute has rolled', () => {
    let now = 1_000_000;
    const m = new BudgetMeter(BudgetSchema.parse({ callsPerMinute: 2 }), () => now);
    expect(m.admit(10, 0, 0)).toEqual({ ok: true });
    expect(m.admit(10, 0, 0)).toEqual({ ok: true });
    expect(m.admit(10, 0, 0)).toEqual({ ok: false, reason: 'calls-per-minute' });
    now += 60_000;
    expect(m.admit(10, 0, 0)).toEqual({ ok: true });
  });

  it('defers beyond tokens per day, charging reported usage in place of the estimate', () => {
    let now = 0;
    const m = new BudgetMeter(BudgetSchema.parse({ tokensPerDay: 100, callsPerMinute: 100 }), () => now);
    expect(m.admit(60, 0, 0).ok).toBe(true);
    expect(m.admit(60, 0, 0)).toEqual({ ok: false, reason: 'tokens-per-day' });
    m.settle(60, 20);
    expect(m.tokensToday).toBe(20);
    m.settle(60, null); // unknown usage keeps the estimate: nothing changes
    expect(m.tokensToday).toBe(20);
    expect(m.admit(60, 0, 0).ok).toBe(true);
    now += 86_400_000;
    expect(m.admit(100, 0, 0).ok).toBe(true);
  });

  it('defers when every concurrency slot is busy and the wait queue is full', () => {
    const m = new BudgetMeter(BudgetSchema.parse({ maxConcurrent: 1, maxQueuedWindows: 1 }), () => 0);
    expect(m.admit(1, 0, 1).ok).toBe(true);
    expect(m.admit(1, 1, 1)).toEqual({ ok: false, reason: 'queue-full' });
  });
});
