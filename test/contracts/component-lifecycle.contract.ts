import { describe, expect, it } from 'vitest';
import type { Component } from '../../src/topology/component.ts';

/** One component under the lifecycle contract (`src/topology/component.ts`). */
export interface LifecycleCase {
  /** A new component, built as the topology builds it (resources opened), not started. */
  build(): Promise<Component>;
  /**
   * Whether the suite may also `start` it: only for components whose start needs no server,
   * socket or broker (a listener or a Kafka client is started by their own integration tests).
   */
  startable: boolean;
}

/** What is running in this process (timers, handles, requests), by kind. */
function running(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** The kinds of which more are running than in `before`. */
function added(before: Map<string, number>, after: Map<string, number>): string[] {
  return [...after].filter(([kind, n]) => n > (before.get(kind) ?? 0)).map(([kind, n]) => `${kind} +${n - (before.get(kind) ?? 0)}`);
}

/** `health()` answers at once, with a reason or undefined, and starts nothing (no I/O). */
function expectHealthWithoutIo(component: Component): void {
  const before = running();
  const health: unknown = component.health();
  expect(added(before, running())).toEqual([]);
  expect(health === undefined || typeof health === 'string').toBe(true);
}

/** Waits one turn of the event loop, so what a resolved stop closed is gone from the handle list. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The lifecycle every component keeps (the Collector's generated lifecycle tests): `stop` is
 * safe without `start` and safe twice, leaving nothing running that the component began;
 * `health` reads state, with no I/O, before start and after stop.
 */
export function runLifecycleContract(name: string, c: LifecycleCase): void {
  describe(`${name}: lifecycle contract`, () => {
    it('stop without start resolves and leaves nothing running', async () => {
      const before = running();
      const component = await c.build();
      expectHealthWithoutIo(component);
      await component.stop();
      await settle();
      expect(added(before, running())).toEqual([]);
    });

    it('stop twice: both calls resolve, the second without new work', async () => {
      const component = await c.build();
      const together = [component.stop(), component.stop()];
      await Promise.all(together);
      const before = running();
      await component.stop();
      expect(added(before, running())).toEqual([]);
      expectHealthWithoutIo(component);
    });

    // Only where starting needs no socket or broker (those start in their own integration tests): not a skip, no test.
    if (c.startable)
      it('start, then stop twice: background work ends with the first stop; health reads state without I/O throughout', async () => {
        const before = running();
        const component = await c.build();
        await component.start();
        expectHealthWithoutIo(component);
        await component.stop();
        await component.stop();
        await settle();
        expect(added(before, running())).toEqual([]);
        expectHealthWithoutIo(component);
      });
  });
}
