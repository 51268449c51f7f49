import { describe, expect, it } from 'vitest';
import { JudgeBudget } from '../../src/judge/budget.ts';
import { BudgetSchema } from '../../src/windows/budget.ts';

describe('judge budget (what is left)', () => {
  it('counts admissions and retries against the rolling minute, and gives the minute back when it rolls', () => {
    let now = 1_000_000;
    const b = new JudgeBudget(BudgetSchema.parse({ callsPerMinute: 5, tokensPerDay: 1000, maxQueuedWindows: 4 }), () => now);
    expect(b.admit(100, 0, 0)).toEqual({ ok: true });
    b.spent(100, 300, 3); // two retries take two more slots; 300 tokens charged in place of 100
    expect(b.remaining(1)).toEqual({ 'calls-per-minute': 2, 'tokens-per-day': 700, 'queued-windows': 3 });
    now += 60_000;
    expect(b.remaining(0)['calls-per-minute']).toBe(5);
    expect(b.remaining(0)['tokens-per-day']).toBe(700);
  });

  it('names the bound that refuses: calls-per-minute, tokens-per-day, queue-full', () => {
    const b = new JudgeBudget(BudgetSchema.parse({ callsPerMinute: 1, tokensPerDay: 50, maxConcurrent: 1, maxQueuedWindows: 0 }), () => 0);
    expect(b.admit(60, 0, 0)).toEqual({ ok: false, reason: 'tokens-per-day' });
    expect(b.admit(10, 0, 1)).toEqual({ ok: false, reason: 'queue-full' });
    expect(b.admit(10, 0, 0)).toEqual({ ok: true });
    expect(b.admit(10, 0, 0)).toEqual({ ok: false, reason: 'calls-per-minute' });
  });

  it('shows a new UTC day with its whole token budget before anything is admitted on it', () => {
    let now = 0;
    const b = new JudgeBudget(BudgetSchema.parse({ tokensPerDay: 1000 }), () => now);
    b.admit(400, 0, 0);
    expect(b.remaining(0)['tokens-per-day']).toBe(600);
    now = 86_400_000 + 5;
    expect(b.remaining(0)['tokens-per-day']).toBe(1000);
  });
});
