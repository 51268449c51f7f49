import { describe, expect, it } from 'vitest';
import { FAULT_LOG_INTERVAL_MS, FaultLog } from '../../src/telemetry/fault-log.ts';
import { createLogger } from '../../src/telemetry/logger.ts';

function capture() {
  const raw: string[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void raw.push(line) } });
  return { logger, lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('FaultLog', () => {
  it('logs the first of repeated faults and the recovery, with the count and duration at recovery', () => {
    const { logger, lines } = capture();
    let now = 1_000;
    const faults = new FaultLog(logger, 'refusing OTLP requests', () => now);
    for (let i = 0; i < 500; i++) faults.fault('kafka-outbox-full');
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatchObject({ level: 'warn', reason: 'kafka-outbox-full', msg: 'refusing OTLP requests: kafka-outbox-full' });
    expect(faults.failing).toBe(true);
    now = 4_500;
    faults.ok();
    faults.ok();
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatchObject({
      level: 'info',
      reason: 'kafka-outbox-full',
      occurrences: 500,
      durationMs: 3_500,
      msg: 'refusing OTLP requests: recovered',
    });
    expect(faults.failing).toBe(false);
  });

  it('logs a change of reason during an episode, with how often the previous one was seen', () => {
    const { logger, lines } = capture();
    const faults = new FaultLog(logger, 'span-wal unhealthy');
    faults.observe('wal-full');
    faults.observe('wal-full');
    faults.observe('wal-unwritable');
    faults.observe('wal-unwritable');
    faults.observe(undefined);
    expect(lines().map((l) => l['msg'])).toEqual(['span-wal unhealthy: wal-full', 'span-wal unhealthy: now wal-unwritable', 'span-wal unhealthy: recovered']);
    expect(lines()[1]).toMatchObject({ previous: 'wal-full', occurrences: 2 });
    expect(lines()[2]).toMatchObject({ reason: 'wal-unwritable', occurrences: 2 });
  });

  it('logs nothing while healthy, and a new episode after a recovery', () => {
    const { logger, lines } = capture();
    let now = 0;
    const faults = new FaultLog(logger, 'x', () => now);
    for (let i = 0; i < 10; i++) faults.ok();
    expect(lines()).toHaveLength(0);
    faults.fault('a');
    faults.ok();
    now += FAULT_LOG_INTERVAL_MS;
    faults.fault('a');
    expect(lines().map((l) => l['msg'])).toEqual(['x: a', 'x: recovered', 'x: a']);
  });

  it("a flapping state writes at most one line per kind of change per interval, then the state at the interval's end, with the flaps held", async () => {
    const { logger, lines } = capture();
    const faults = new FaultLog(logger, 'refusing OTLP requests', Date.now, 50);
    // 1,000 flips between refusing and accepting inside one interval (the field saw 112 lines/s).
    for (let i = 0; i < 500; i++) {
      faults.fault('wal-unwritable');
      faults.ok();
    }
    faults.fault('wal-unwritable');
    expect(lines().map((l) => l['msg'])).toEqual(['refusing OTLP requests: wal-unwritable', 'refusing OTLP requests: recovered']);
    await new Promise((r) => setTimeout(r, 120));
    // The interval ended refusing, which differs from the last line: one line says so, with the flaps.
    expect(lines().map((l) => l['msg'])).toEqual([
      'refusing OTLP requests: wal-unwritable',
      'refusing OTLP requests: recovered',
      'refusing OTLP requests: wal-unwritable',
    ]);
    expect(lines()[2]).toMatchObject({ flaps: 999 });
    expect(faults.failing).toBe(true);
    // Healthy for good: the recovery is written, once.
    faults.ok();
    for (let i = 0; i < 10; i++) faults.ok();
    await new Promise((r) => setTimeout(r, 120));
    expect(
      lines()
        .map((l) => l['msg'])
        .at(-1),
    ).toBe('refusing OTLP requests: recovered');
    expect(lines()).toHaveLength(4);
  });
});
