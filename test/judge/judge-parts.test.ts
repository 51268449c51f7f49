import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { admitCall } from '../../src/judge/admission.ts';
import { JudgeBudget } from '../../src/judge/budget.ts';
import { Ledger } from '../../src/judge/ledger/ledger.ts';
import { LedgerBoundsSchema } from '../../src/judge/ledger/bounds.ts';
import { BudgetSchema } from '../../src/windows/budget.ts';
import { FaultReporter, type JudgeFault } from '../../src/judge/fault.ts';
import { prior } from '../../src/judge/ledger/protocol.ts';
import type { IntentRecord, ResultRecord } from '../../src/judge/ledger/record.ts';

describe('ledger protocol: what the ledger already holds decides a window', () => {
  it('maps each lookup to call, duplicate, replay or an unanswerable failure with its counter', () => {
    const result = { type: 'result' } as ResultRecord;
    expect(prior({ kind: 'new' })).toEqual({ kind: 'call' });
    expect(prior({ kind: 'in-flight' })).toEqual({ kind: 'duplicate' });
    expect(prior({ kind: 'replay', result })).toEqual({ kind: 'replay', result });
    expect(prior({ kind: 'conflict', changed: ['state', 'certificates'] })).toEqual({
      kind: 'unanswerable',
      counter: 'conflicts',
      failure: { kind: 'ledger-conflict', message: 'same key, changed inputs: state, certificates' },
    });
    expect(prior({ kind: 'conflict', changed: [] })).toMatchObject({ failure: { message: 'same key, changed inputs: input' } });
    expect(prior({ kind: 'unresolved-intent', intent: {} as IntentRecord })).toMatchObject({
      kind: 'unanswerable',
      counter: 'unresolvedIntents',
      failure: { kind: 'intent-without-result' },
    });
  });
});

describe('fault reporter', () => {
  it('counts every fault by part, marks the first of each part, and tells onFault and onError', () => {
    const counts: Record<string, number> = {};
    const events: JudgeFault[] = [];
    const errors: unknown[] = [];
    const r = new FaultReporter(
      counts,
      (e) => events.push(e),
      (e) => errors.push(e),
    );
    r.report('ledger', new Error('disk full'));
    r.report('ledger', new Error('disk full'));
    r.report('emit', 'not an error');
    expect(counts).toEqual({ ledger: 2, emit: 1 });
    expect(events.map((e) => [e.part, e.first, e.message])).toEqual([
      ['ledger', true, 'disk full'],
      ['ledger', false, 'disk full'],
      ['emit', true, 'not an error'],
    ]);
    expect(errors).toHaveLength(3);
  });

  it('without listeners only counts (nothing is written to the process streams), and a listener that throws is counted, not rethrown', () => {
    const counts: Record<string, number> = {};
    const write = process.stderr.write;
    let written = 0;
    process.stderr.write = (() => (written++, true)) as typeof process.stderr.write;
    try {
      new FaultReporter(counts).report('judge', new Error('x'));
      new FaultReporter(counts, () => {
        throw new Error('listener');
      }).report('judge', new Error('y'));
    } finally {
      process.stderr.write = write;
    }
    expect(written).toBe(0);
    expect(counts).toEqual({ judge: 2, listener: 1 });
  });
});

describe('admission: ledger room, then budget', () => {
  const key = { point: 'trace-questions@1', runId: 'r', invocationId: 'w1_a' };

  it('defers ledger-full without charging the budget, and gives the ledger room back when the budget refuses', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-admit-'));
    const ledger = await Ledger.open(dir, { bounds: LedgerBoundsSchema.parse({ compactAtBytes: 4096, maxBytes: 65536 }) });
    const budget = new JudgeBudget(BudgetSchema.parse({ callsPerMinute: 1 }), () => 0);
    const call = { key, intentBytes: 1000, estimatedTokens: 10 };
    const idle = { queued: 0, inFlight: 0 };
    expect(admitCall(ledger, budget, { ...call, intentBytes: 70_000 }, idle)).toEqual({
      ok: false,
      reason: 'ledger-full',
      detail: 'ledger: 0 bytes needed for replay, maxBytes 65536',
    });
    expect(budget.remaining(0)['calls-per-minute']).toBe(1); // the ledger refused first: nothing charged
    expect(admitCall(ledger, budget, call, idle)).toEqual({ ok: true });
    expect(admitCall(ledger, budget, call, idle)).toEqual({ ok: false, reason: 'calls-per-minute', detail: 'budget: calls-per-minute' });
    // Only the admitted call still holds room: two more calls' worth fit beside it.
    expect(ledger.reserve(key, 1000) && ledger.reserve(key, 1000)).toBe(true);
    expect(ledger.reserve(key, 1000)).toBe(false);
    await ledger.close();
  });
});
