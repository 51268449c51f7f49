import { describe, expect, it } from 'vitest';
import { REFUSAL } from '../../src/ingest/refusal.ts';
import { silentLogger } from '../../src/telemetry/logger.ts';
import type { Component } from '../../src/topology/component.ts';
import { healthReport } from '../../src/topology/health-routes.ts';
import { RunningTopology } from '../../src/topology/running.ts';

/** A component whose readings the test sets. */
function part(name: string): Component & { refusal?: string; worse?: string } {
  const c: Component & { refusal?: string; worse?: string } = {
    name,
    start: async () => {},
    stop: async () => {},
    health: () => c.refusal,
    degraded: () => c.worse,
  };
  return c;
}

describe('the health report', () => {
  it('reads every component once: ok, its refusal (unhealthy), or degraded with its reason', async () => {
    const sink = part('kafka');
    const judge = part('judge');
    const running = new RunningTopology([[sink], [judge]], silentLogger());
    const report = () => healthReport({ running, judge: () => ({ state: 'off' }), redactJudge: false });
    expect(report().status).toBe('starting');
    await running.start();
    expect(report()).toMatchObject({ status: 'ok', components: { kafka: 'ok', judge: 'ok' } });
    judge.worse = 'http 500';
    expect(report()).toMatchObject({ status: 'degraded', components: { kafka: 'ok', judge: 'degraded: http 500' } });
    sink.refusal = REFUSAL.kafkaOutboxFull;
    expect(report()).toMatchObject({ status: 'unhealthy', components: { kafka: 'kafka-outbox-full', judge: 'degraded: http 500' } });
    await running.stop();
  });
});
