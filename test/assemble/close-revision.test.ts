import { describe, expect, it } from 'vitest';
import { closeRevision } from '../../src/assemble/close-revision.ts';
import { emptyBuffer } from '../../src/assemble/open-buffer.ts';
import type { Step } from '../../src/normalize/step.ts';
import { makeStep } from '../helpers/steps.ts';

function bufferWith(steps: Step[], rootSeen: boolean) {
  const buffer = emptyBuffer('k', 0);
  for (const s of steps) {
    buffer.steps.set(`${s.traceId}/${s.id}`, s);
    buffer.traceIds.add(s.traceId);
  }
  buffer.rootSeen = rootSeen;
  return buffer;
}

describe('closeRevision: the trajectory an open buffer closes as', () => {
  it('orders steps by time whatever their arrival order, and is complete with a root and no gaps', () => {
    const late = makeStep({ id: 'b', parentId: 'a', startTimeUnixNano: 3n, endTimeUnixNano: 4n });
    const root = makeStep({ id: 'a', startTimeUnixNano: 1n, endTimeUnixNano: 5n });
    const { trajectory } = closeRevision(bufferWith([late, root], true), 'quiet-after-root');
    expect(trajectory.steps.map((s) => s.id)).toEqual(['a', 'b']);
    expect(trajectory).toMatchObject({ complete: true, incompleteReasons: [], closedBy: 'quiet-after-root', revision: 1 });
  });

  it('says every reason a revision is incomplete, sorted: no root, orphan parents, how it closed', () => {
    const orphan = makeStep({ id: 'b', parentId: 'missing' });
    const { trajectory, inherited } = closeRevision(bufferWith([orphan], false), 'idle-timeout');
    expect(trajectory.complete).toBe(false);
    expect(trajectory.incompleteReasons).toEqual(['idle-timeout', 'orphan-parents', 'root-not-seen']);
    expect(inherited.refusedSpans).toBe(0);
  });

  it('marks end-of-input only when the root was not seen', () => {
    const root = makeStep({ id: 'a' });
    expect(closeRevision(bufferWith([root], true), 'end-of-input').trajectory.incompleteReasons).toEqual([]);
    expect(closeRevision(bufferWith([makeStep({ id: 'b', parentId: 'a' })], false), 'end-of-input').trajectory.incompleteReasons).toContain('end-of-input');
  });
});
