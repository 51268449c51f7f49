import { describe, expect, it } from 'vitest';
import { targetStatus, targetsTable } from '../../bench/targets.ts';

describe('benchmark targets', () => {
  it('marks a figure against a lower or an upper bound, and a missing figure as not measured', () => {
    expect(targetStatus({ target: 'ratio', value: 0.7, atLeast: 0.7, unit: '×' })).toBe('met');
    expect(targetStatus({ target: 'ratio', value: 0.69, atLeast: 0.7, unit: '×' })).toBe('not met');
    expect(targetStatus({ target: 'p99', value: 50.1, atMost: 50, unit: 'ms' })).toBe('not met');
    expect(targetStatus({ target: 'p99', value: 12, atMost: 50, unit: 'ms' })).toBe('met');
    expect(targetStatus({ target: 'p99', value: undefined, atMost: 50, unit: 'ms' })).toBe('not measured');
    expect(targetStatus({ target: 'p99', value: Number.NaN, atMost: 50, unit: 'ms' })).toBe('not measured');
  });

  it('says when a figure was taken on less than the target names', () => {
    const table = targetsTable([
      { target: '≥ 0.7 × on TRAIL', value: 0.9, atLeast: 0.7, unit: '×', partial: true },
      { target: 'heap', value: 300, atMost: 256, unit: 'B' },
    ]);
    const [, , partial, heap] = table.split('\n');
    expect(partial).toContain('0.90 ×');
    expect(partial).toContain('not measured on the full corpus');
    expect(heap).toContain('300 B');
    expect(heap).toContain('**not met**');
  });

  it('shows memory in MB and open trajectories as a count', () => {
    const [, , rss, open] = targetsTable([
      { target: 'RSS', value: 1600.4, atMost: 1536, unit: 'MB' },
      { target: 'first refusal', value: 140, atLeast: 10_000, unit: 'open' },
    ]).split('\n');
    expect(rss).toContain('1600 MB');
    expect(rss).toContain('**not met**');
    expect(open).toContain('140 open');
    expect(open).toContain('**not met**');
    const [, , reached] = targetsTable([{ target: 'first refusal', value: 10_000, atLeast: 10_000, unit: 'open' }]).split('\n');
    expect(reached).toContain('10,000 open');
    expect(reached).toContain('**met**');
  });

  it('shows one more digit where two would round a figure onto its bound', () => {
    const [, , row] = targetsTable([{ target: 'scaling', value: 0.8995, atLeast: 0.9, unit: '×' }]).split('\n');
    expect(row).toContain('0.899 ×');
    expect(row).toContain('**not met**');
  });
});
