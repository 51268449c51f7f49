import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../../src/errors.ts';
import { DeliveryEngine, type DeliveryConfig } from '../../../src/sinks/delivery/engine.ts';
import { OutboxFindingSink, type OutboxFindingSinkOptions, type OverflowWording } from '../../../src/sinks/delivery/outbox-finding-sink.ts';
import type { Finding } from '../../../src/findings/schema.ts';
import type { DeliveryTransport } from '../../../src/sinks/delivery/transport.ts';
import { SINK_RECORD_SHAPE, type SinkRecord } from '../../../src/sinks/record.ts';
import { DEFAULT_OUTBOX_LIMITS, Outbox, type OutboxEntry, type OutboxLimits } from '../../../src/storage/outbox.ts';

// The engine against a transport in memory (its seam: each real transport is tested against a
// real broker / OTLP receiver in test/sinks), over a real outbox on disk.

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
const tempDir = async () => {
  const d = await mkdtemp(join(tmpdir(), 'trajwatch-delivery-'));
  dirs.push(d);
  return d;
};

const record = (id: string): SinkRecord => ({ topic: 'findings', key: 'k', id, value: JSON.stringify({ id }), headers: {} });
const CONFIG: DeliveryConfig = { batchSize: 3, maxBatchBytes: 1 << 20, retryInitialMs: 1, retryMaxMs: 10_000 };

/** Takes every batch unless `fail` says otherwise; `hold` keeps requests unanswered. */
class MemoryTransport implements DeliveryTransport<SinkRecord> {
  batches: string[][] = [];
  attempts = 0;
  resets = 0;
  closed = false;
  fail: Error | undefined;
  hold = false;
  async send(entries: readonly OutboxEntry<SinkRecord>[]): Promise<void> {
    this.attempts += 1;
    if (this.hold) await new Promise(() => {});
    if (this.fail !== undefined) throw this.fail;
    this.batches.push(entries.map((e) => e.record.id));
  }
  isRetryable(err: unknown): boolean {
    return !(err instanceof UpstreamError) || err.retriable;
  }
  async reset(): Promise<void> {
    this.resets += 1;
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

type Logged = [level: string, message: string, context: Record<string, unknown> | undefined];

async function engine(options: { dir?: string; transport?: MemoryTransport; limits?: Partial<OutboxLimits>; config?: Partial<DeliveryConfig> } = {}) {
  const dir = options.dir ?? (await tempDir());
  const transport = options.transport ?? new MemoryTransport();
  const logged: Logged[] = [];
  const outbox = await Outbox.open(dir, SINK_RECORD_SHAPE, { ...DEFAULT_OUTBOX_LIMITS, ...options.limits });
  const e = new DeliveryEngine({
    outbox,
    transport,
    config: { ...CONFIG, ...options.config },
    log: (level, message, context) => logged.push([level, message, context]),
    names: { delivery: 'test delivery', outbox: 'test outbox' },
    random: () => 0, // no wait between retryable attempts
  });
  return { dir, transport, logged, engine: e };
}

const until = async (condition: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('DeliveryEngine', () => {
  it('delivers in sequence order, at most batchSize per request, and flushed() resolves once all are acknowledged', async () => {
    const { engine: e, transport } = await engine();
    expect(e.write(['a', 'b', 'c', 'd'].map(record)).ok).toBe(true);
    expect(e.write([record('e')]).ok).toBe(true);
    await e.flushed();
    expect(transport.batches.flat()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(Math.max(...transport.batches.map((b) => b.length))).toBeLessThanOrEqual(3);
    expect(e.stats()).toMatchObject({ delivered: 5, sendErrors: 0, failing: false });
    await until(() => e.waiting().records === 0);
    expect(await e.close(1_000)).toEqual({ flushed: true, pendingRecords: 0 });
    expect(transport.closed).toBe(true);
  });

  it('retries a retryable failure on the backoff with a fresh transport each time, logging the first failure and the recovery only', async () => {
    const transport = new MemoryTransport();
    transport.fail = new UpstreamError('broker away', { retriable: true });
    const { engine: e, logged } = await engine({ transport });
    e.write([record('a')]);
    await until(() => transport.attempts >= 5);
    expect(e.stats().failing).toBe(true);
    expect(transport.resets).toBeGreaterThanOrEqual(4);
    transport.fail = undefined;
    await e.flushed();
    expect(transport.batches).toEqual([['a']]);
    expect(e.stats()).toMatchObject({ failing: false, delivered: 1, lastError: 'UpstreamError: broker away' });
    expect(logged.map(([level, message]) => [level, message])).toEqual([
      ['warn', 'test delivery failing; records wait in the outbox and are retried'],
      ['info', 'test delivery recovered'],
    ]);
    await e.close(1_000);
  });

  it('keeps a record whose failure is not retryable, logs it as an error and waits the longest backoff before the next attempt', async () => {
    const transport = new MemoryTransport();
    transport.fail = new UpstreamError('topic authorization failed', { retriable: false });
    const { engine: e, logged } = await engine({ transport });
    e.write([record('a')]);
    await until(() => transport.attempts >= 1);
    await new Promise((r) => setTimeout(r, 200)); // a retryable failure would have been tried again many times by now
    expect(transport.attempts).toBe(1);
    expect(logged[0]).toEqual(['error', 'test delivery failing; records wait in the outbox and are retried', expect.objectContaining({ retryable: false })]);
    const closed = await e.close(0);
    expect(closed).toEqual({ flushed: false, pendingRecords: 1 });
  });

  it('close gives up after its timeout and leaves the rest in the outbox, which the next engine over it delivers', async () => {
    const held = new MemoryTransport();
    held.hold = true;
    const first = await engine({ transport: held });
    first.engine.write(['a', 'b'].map(record));
    await until(() => held.attempts >= 1);
    expect(first.engine.write([record('c')]).ok).toBe(true);
    expect(await first.engine.close(50)).toEqual({ flushed: false, pendingRecords: 3 });
    expect(first.engine.write([record('d')])).toEqual({ ok: false, reason: 'closed' });

    const second = await engine({ dir: first.dir });
    await second.engine.flushed();
    await until(() => second.transport.batches.flat().length === 3);
    expect(second.transport.batches.flat()).toEqual(['a', 'b', 'c']);
    await second.engine.close(1_000);
  });

  it('refuses past its outbox bound and says so: refusal() and the refusedFull count', async () => {
    const transport = new MemoryTransport();
    transport.hold = true;
    const { engine: e } = await engine({ transport, limits: { maxOutboxRecords: 2 } });
    expect(e.write(['a', 'b'].map(record)).ok).toBe(true);
    expect(e.write([record('c')])).toMatchObject({ ok: false, reason: 'full' });
    expect(e.refusal()).toBe('full');
    expect(e.stats().refusedFull).toBe(1);
    await e.close(0);
  });
});

const WORDING: OverflowWording = {
  closed: 'test-closed',
  unwritable: 'test-unwritable',
  full: 'test-full',
  sink: 'test sink',
  record: 'record',
  sent: 'sent',
  closedUndelivered: 'closed with records undelivered',
};

/** The smallest outbox sink: a finding's id is its record. */
class TestSink extends OutboxFindingSink {
  readonly name = 'test';
  constructor(e: DeliveryEngine<SinkRecord>, options: Omit<OutboxFindingSinkOptions, 'wording' | 'closeTimeoutMs'>, closeTimeoutMs = 1_000) {
    super(e, { ...options, wording: WORDING, closeTimeoutMs });
  }
  write(findings: readonly Finding[]): void {
    this.offer(findings.map((f) => record(f.finding_id)));
  }
  /** Records by id, as a test writes them. */
  put(ids: string[]): void {
    this.offer(ids.map(record));
  }
}

describe('OutboxFindingSink (the overflow in front of the engine)', () => {
  it('takes every record past a full outbox, in order, counts it in records and bytes, reports backpressure; after close it refuses and flushed() says so', async () => {
    const transport = new MemoryTransport();
    transport.hold = true;
    const { engine: e } = await engine({ transport, limits: { maxOutboxRecords: 2 }, config: { batchSize: 1 } });
    const logged: Logged[] = [];
    const sink = new TestSink(e, { log: (level, message, context) => logged.push([level, message, context]), maxOverflowRecords: 3 }, 0);
    sink.put(['a', 'b']);
    sink.put(['c', 'd', 'e', 'f']);
    expect(sink.overflowRecords).toBe(4);
    expect(sink.backlog()).toEqual({ records: 6, bytes: e.waiting().bytes + 4 * Buffer.byteLength(record('c').value) });
    expect(sink.backpressure()).toBe('test-full');
    // The bound is an alarm, not a refusal: the fourth is held, counted and logged once.
    expect(sink.pastBound).toBe(1);
    expect(logged.filter(([level]) => level === 'error')).toHaveLength(1);

    await sink.close();
    expect(sink.backpressure()).toBe('test-closed');
    sink.put(['late']);
    await expect(sink.flushed()).rejects.toThrow(/test sink closed: 1 record\(s\) written after close were not sent/);
  });

  it('moves the overflow into the outbox as room frees, so all arrive in the order offered', async () => {
    const { engine: e, transport } = await engine({ limits: { maxOutboxRecords: 2 }, config: { batchSize: 1 } });
    const sink = new TestSink(e, { log: () => {} });
    const ids = Array.from({ length: 12 }, (_, i) => `r${i}`);
    sink.put(ids.slice(0, 5));
    sink.put(ids.slice(5));
    await sink.flushed();
    expect(transport.batches.flat()).toEqual(ids);
    expect(sink.overflowRecords).toBe(0);
    // Room comes back once the acknowledgements are recorded in the outbox (in the background).
    await until(() => sink.backpressure() === undefined);
    expect(sink.backlog()).toEqual({ records: 0, bytes: 0 });
    await sink.close();
  });
});
