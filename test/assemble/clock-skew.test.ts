import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_TOLERANCE_NS, readClocks, treeOrdered } from '../../src/assemble/clock-skew.ts';
import { captureGaps } from '../../src/assemble/capture-gaps.ts';
import { compareSteps } from '../../src/assemble/step-order.ts';
import type { Step } from '../../src/normalize/step.ts';
import { step } from '../checks/builders.ts';

const S = 1_000_000_000n;
const on = (host: string) => ({ 'service.name': 'agent', 'host.name': host });
/** A step from `host`, `startS`–`endS` seconds. */
function at(id: string, parentId: string | undefined, startS: number, endS: number, host = 'a'): Step {
  const s = step('tool', { id, toolName: id, ...(parentId === undefined ? {} : { parentId }), resource: on(host) });
  s.startTimeUnixNano = BigInt(Math.round(startS * 1000)) * 1_000_000n;
  s.endTimeUnixNano = BigInt(Math.round(endS * 1000)) * 1_000_000n;
  return s;
}

describe('readClocks', () => {
  it('reads no skew in a tree whose children sit inside their parents', () => {
    const steps = [at('r', undefined, 0, 10), at('c1', 'r', 1, 2), at('c2', 'r', 3, 4, 'b')];
    expect(readClocks(steps).skews).toEqual([]);
    expect(captureGaps(steps).map((g) => g.reason)).not.toContain('clock-skew');
  });

  it('an asynchronous child of the same emitter that outlives its parent is not skew', () => {
    const steps = [at('r', undefined, 0, 1), at('c', 'r', 0.5, 30)];
    expect(readClocks(steps).skews).toEqual([]);
  });

  it('a child from another host that outlives its parent is skew, by how far it is ahead', () => {
    const steps = [at('r', undefined, 0, 10), at('client', 'r', 2.5, 3), at('gate', 'client', 7.5, 7.9, 'b')];
    const { skews } = readClocks(steps);
    expect(skews).toEqual([{ spanId: 'gate', traceId: steps[2]!.traceId, parentId: 'client', offsetNs: -4_900_000_000n, crossEmitter: true }]);
    expect(captureGaps(steps).find((g) => g.reason === 'clock-skew')).toEqual({ reason: 'clock-skew', spanIds: ['gate'], skewNs: '4900000000' });
  });

  it('a child that starts before its parent is skew whoever emitted it', () => {
    const steps = [at('early', 'r', 1, 2), at('r', undefined, 100, 110)];
    expect(readClocks(steps).skews.map((s) => [s.spanId, s.offsetNs, s.crossEmitter])).toEqual([['early', 99n * S, false]]);
  });

  it('differences within the tolerance are rounding, not skew', () => {
    const r = at('r', undefined, 1, 2);
    const c = at('c', 'r', 1, 2, 'b');
    c.startTimeUnixNano = r.startTimeUnixNano - CLOCK_SKEW_TOLERANCE_NS;
    c.endTimeUnixNano = r.endTimeUnixNano + CLOCK_SKEW_TOLERANCE_NS;
    expect(readClocks([r, c]).skews).toEqual([]);
    c.startTimeUnixNano -= 1n;
    expect(readClocks([r, c]).skews).toHaveLength(1);
  });

  it('a skewed span carries its shift to its same-clock descendants, which are not counted again', () => {
    const steps = [at('r', undefined, 10, 20), at('c', 'r', 1, 3), at('g', 'c', 1.5, 2)];
    const { skews, shiftNs } = readClocks(steps);
    expect(skews.map((s) => s.spanId)).toEqual(['c']);
    expect(shiftNs).toEqual([0n, 9n * S, 9n * S]);
  });
});

describe('treeOrdered', () => {
  it('returns the same array when nothing is skewed', () => {
    const steps = [at('r', undefined, 0, 10), at('c', 'r', 1, 2)];
    expect(treeOrdered(steps, compareSteps)).toBe(steps);
  });

  it('orders a host that runs ahead by its parent, and a parent before a child moved to its start', () => {
    const steps = [at('r', undefined, 0, 10), at('client', 'r', 2.5, 3), at('send', 'r', 4, 5), at('gate', 'client', 7.5, 7.9, 'b')];
    expect(treeOrdered(steps, compareSteps).map((s) => s.id)).toEqual(['r', 'client', 'gate', 'send']);
    const early = [at('c', 'r', 1, 2), at('r', undefined, 100, 110), at('d', 'r', 101, 102)];
    expect(treeOrdered(early, compareSteps).map((s) => s.id)).toEqual(['r', 'c', 'd']);
  });
});
