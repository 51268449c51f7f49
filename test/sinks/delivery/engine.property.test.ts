import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../../src/errors.ts';
import { DeliveryEngine } from '../../../src/sinks/delivery/engine.ts';
import type { DeliveryTransport } from '../../../src/sinks/delivery/transport.ts';
import { SINK_RECORD_SHAPE, type SinkRecord } from '../../../src/sinks/record.ts';
import { DEFAULT_OUTBOX_LIMITS, Outbox, type OutboxEntry } from '../../../src/storage/outbox.ts';

// Over random schedules of writes and of failing, then recovering, requests (retryable or
// not), the engine hands every accepted record to the receiving end once, in the order
// written, refuses only past its bound, and closes with nothing left.

const record = (id: string): SinkRecord => ({ topic: 'findings', key: 'k', id, value: id, headers: {} });

/** Fails the requests the schedule marks, once through it (every later one succeeds); records the rest. */
class ScheduledTransport implements DeliveryTransport<SinkRecord> {
  received: string[] = [];
  readonly #schedule: ('ok' | 'retryable' | 'permanent')[];
  #attempt = 0;
  constructor(schedule: ('ok' | 'retryable' | 'permanent')[]) {
    this.#schedule = schedule;
  }
  async send(entries: readonly OutboxEntry<SinkRecord>[]): Promise<void> {
    const outcome = this.#schedule[this.#attempt++ % this.#schedule.length]!;
    await new Promise((r) => setImmediate(r));
    if (outcome !== 'ok' && this.#attempt <= this.#schedule.length) throw new UpstreamError(outcome, { retriable: outcome === 'retryable' });
    this.received.push(...entries.map((e) => e.record.id));
  }
  isRetryable(err: unknown): boolean {
    return err instanceof UpstreamError && err.retriable;
  }
  async close(): Promise<void> {}
}

describe('DeliveryEngine under random failure schedules', () => {
  it('delivers every accepted record once and in order, refusing only past its bound', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.constantFrom('ok' as const, 'retryable' as const, 'permanent' as const), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 3, max: 30 }),
        async (writes, schedule, batchSize, maxOutboxRecords) => {
          const dir = await mkdtemp(join(tmpdir(), 'trajwatch-delivery-prop-'));
          try {
            const transport = new ScheduledTransport(schedule);
            const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, { ...DEFAULT_OUTBOX_LIMITS, maxOutboxRecords });
            // retryMaxMs is the wait after a permanent failure: short here, so a schedule ends soon.
            const engine = new DeliveryEngine({
              outbox,
              transport,
              config: { batchSize, maxBatchBytes: 1 << 20, retryInitialMs: 1, retryMaxMs: 5 },
              log: () => {},
              names: { delivery: 'p', outbox: 'p' },
              random: () => 0.5,
            });
            const accepted: string[] = [];
            let n = 0;
            for (const size of writes) {
              const ids = Array.from({ length: size }, () => `r${n++}`);
              const result = engine.write(ids.map(record));
              if (result.ok) accepted.push(...ids);
              else expect(result.reason === 'full' || result.reason === 'too-large').toBe(true);
              if (!result.ok && result.reason === 'full') expect(outbox.pendingRecords + size).toBeGreaterThan(maxOutboxRecords);
              await new Promise((r) => setImmediate(r));
            }
            await engine.flushed();
            expect(transport.received).toEqual(accepted);
            expect((await engine.close(1_000)).flushed).toBe(true);
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});
