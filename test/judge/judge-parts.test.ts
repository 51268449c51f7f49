import { describe, expect, it } from 'vitest';
import { FaultReporter, type JudgeFault } from '../../src/judge/fault.ts';
import { prior } from '../../src/judge/ledger-protocol.ts';
import type { IntentRecord, ResultRecord } from '../../src/judge/ledger-record.ts';

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
    expect(prior({ kind: 'unresolved-intent', intent: {} as IntentRecord })).toMatchObject({ kind: 'unanswerable', counter: 'unresolvedIntents', failure: { kind: 'intent-without-result' } });
  });
});

describe('fault reporter', () => {
  it('counts every fault by part, marks the first of each part, and tells onFault and onError', () => {
    const counts: Record<string, number> = {};
    const events: JudgeFault[] = [];
    const errors: unknown[] = [];
    const r = new FaultReporter(counts, (e) => events.push(e), (e) => errors.push(e));
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

  it('without listeners only counts (nothing is written to the process streams), and a throwing listener is swallowed', () => {
    const counts: Record<string, number> = {};
    const write = process.stderr.write;
    let written = 0;
    process.stderr.write = (() => ((written++), true)) as typeof process.stderr.write;
    try {
      new FaultReporter(counts).report('judge', new Error('x'));
      new FaultReporter(counts, () => {
        throw new Error('listener');
      }).report('judge', new Error('y'));
    } finally {
      process.stderr.write = write;
    }
    expect(written).toBe(0);
    expect(counts).toEqual({ judge: 2 });
  });
});
