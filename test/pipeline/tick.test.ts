import { describe, expect, it } from 'vitest';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import type { Span } from '../../src/ingest/span.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';

function rootSpan(i: number): Span {
  return {
    traceId: i.toString(16).padStart(32, '0'),
    spanId: '00000000000000aa',
    name: 'agent',
    kind: 1,
    startTimeUnixNano: 1_000n,
    endTimeUnixNano: 2_000n,
    status: { code: 0 },
    attributes: {},
    events: [],
    links: [],
    resource: {},
    scope: { name: 'test' },
    encodedBytes: 10,
  };
}

/** Busy-waits `ms`: an analysis that costs time, so the turn budget is what stops a tick. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('Pipeline.tick', () => {
  it('closes a burst in several event-loop turns, letting other work in between, and closes all of it', async () => {
    let closed = 0;
    const pipeline = new Pipeline({
      limits: AssemblerLimitsSchema.parse({ quietPeriodMs: 1, idleTimeoutMs: 1 }),
      clock: 'arrival',
      analyze: () => {
        spin(2);
        closed++;
        return { checks: { l0: [], repetition: { status: 'none-observed' }, silenced: [] }, findings: [] };
      },
      sinks: [],
    });
    const n = 40;
    pipeline.accept({ spans: Array.from({ length: n }, (_, i) => rootSpan(i + 1)), rejected: [] });
    pipeline.tick(Date.now() + 60_000);
    // 40 closes of 2 ms each cannot fit one turn's budget: the first tick returns with work left.
    const afterFirstTurn = closed;
    expect(afterFirstTurn).toBeGreaterThan(0);
    expect(afterFirstTurn).toBeLessThan(n);
    // Other work (an I/O callback, a timer) runs before the rest.
    let closedWhenTimerRan = -1;
    setTimeout(() => (closedWhenTimerRan = closed), 0);
    while (closed < n) await new Promise((r) => setImmediate(r));
    expect(closedWhenTimerRan).toBeLessThan(n);
    expect(pipeline.assembler.stats().openTrajectories).toBe(0);
  });
});
