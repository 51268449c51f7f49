import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/telemetry/logger.ts';
import type { Component } from '../../src/topology/component.ts';
import { RunningTopology } from '../../src/topology/running.ts';

function capture() {
  const raw: string[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void raw.push(line) } });
  return { logger, lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

interface Fake extends Component {
  unhealthy: string | undefined;
}

/** A component that records its start and stop in `events`, optionally failing or hanging. */
function fake(name: string, events: string[], o: { failStart?: boolean; failStop?: boolean; hangStop?: boolean } = {}): Fake {
  return {
    name,
    unhealthy: undefined,
    async start() {
      await new Promise((r) => setTimeout(r, 1));
      if (o.failStart === true) throw new Error(`${name} cannot start`);
      events.push(`start ${name}`);
    },
    async stop() {
      events.push(`stop ${name}`);
      if (o.hangStop === true) await new Promise(() => {});
      if (o.failStop === true) throw new Error(`${name} cannot stop`);
    },
    health() {
      return this.unhealthy;
    },
  };
}

describe('RunningTopology', () => {
  it('starts the layers in order and stops them in reverse', async () => {
    const events: string[] = [];
    const running = new RunningTopology(
      [[fake('sink', events)], [fake('judge', events)], [], [fake('pipeline', events)], [fake('http', events), fake('grpc', events)]],
      capture().logger,
    );
    await running.start();
    expect(events.slice(0, 3)).toEqual(['start sink', 'start judge', 'start pipeline']);
    expect(events.slice(3).sort()).toEqual(['start grpc', 'start http']);
    events.length = 0;
    expect(await running.stop(1_000)).toEqual({ outcome: 'stopped' });
    expect(events.slice(0, 2).sort()).toEqual(['stop grpc', 'stop http']);
    expect(events.slice(2)).toEqual(['stop pipeline', 'stop judge', 'stop sink']);
  });

  it('when a start fails, stops every component (started or not) in reverse and throws that failure', async () => {
    const events: string[] = [];
    const { logger, lines } = capture();
    const running = new RunningTopology(
      [[fake('sink', events)], [fake('pipeline', events)], [fake('http', events, { failStart: true })], [fake('kafka', events)]],
      logger,
    );
    await expect(running.start()).rejects.toThrow('http cannot start');
    expect(events).toEqual(['start sink', 'start pipeline', 'stop kafka', 'stop http', 'stop pipeline', 'stop sink']);
    expect(lines().some((l) => l['level'] === 'error' && l['component'] === 'http')).toBe(true);
  });

  it('aborts rather than stops the components that can abort when a start fails', async () => {
    const events: string[] = [];
    const stage = { ...fake('pipeline', events), abort: async () => void events.push('abort pipeline') };
    const running = new RunningTopology([[fake('sink', events)], [stage], [fake('http', events, { failStart: true })]], capture().logger);
    await expect(running.start()).rejects.toThrow('http cannot start');
    expect(events.slice(2)).toEqual(['stop http', 'abort pipeline', 'stop sink']);
  });

  it('stops the rest when one stop fails, and reports the first failure', async () => {
    const events: string[] = [];
    const running = new RunningTopology([[fake('sink', events)], [fake('pipeline', events, { failStop: true })], [fake('http', events)]], capture().logger);
    await running.start();
    const outcome = await running.stop(1_000);
    expect(outcome.outcome).toBe('failed');
    expect(outcome.outcome === 'failed' && outcome.error.message).toBe('pipeline cannot stop');
    expect(events.slice(-3)).toEqual(['stop http', 'stop pipeline', 'stop sink']);
  });

  it('bounds the stop: a component that never finishes stopping ends it with timeout', async () => {
    const events: string[] = [];
    const running = new RunningTopology([[fake('sink', events)], [fake('judge', events, { hangStop: true })]], capture().logger);
    await running.start();
    const started = Date.now();
    expect(await running.stop(200)).toEqual({ outcome: 'timeout', timeoutMs: 200 });
    expect(Date.now() - started).toBeLessThan(2_000);
    // A second stop waits for the same end, it does not stop anything twice.
    expect(await running.stop(200)).toEqual({ outcome: 'timeout', timeoutMs: 200 });
    expect(events.filter((e) => e === 'stop judge')).toHaveLength(1);
  });

  it('logs the first unhealthy reading of a component and its recovery, not every reading', async () => {
    const { logger, lines } = capture();
    const sink = fake('kafka', []);
    const running = new RunningTopology([[sink]], logger);
    running.checkHealth();
    sink.unhealthy = 'kafka-outbox-full';
    for (let i = 0; i < 20; i++) running.checkHealth();
    expect(running.health()).toEqual({ component: 'kafka', reason: 'kafka-outbox-full' });
    sink.unhealthy = undefined;
    running.checkHealth();
    running.checkHealth();
    expect(lines().map((l) => [l['component'], l['msg']])).toEqual([
      ['kafka', 'kafka unhealthy: kafka-outbox-full'],
      ['kafka', 'kafka unhealthy: recovered'],
    ]);
    expect(lines()[1]).toMatchObject({ occurrences: 20 });
  });
});
