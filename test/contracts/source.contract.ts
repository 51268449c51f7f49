import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import { DurableIngest } from '../../src/ingest/wal/durable-ingest.ts';
import type { PipelineInput } from '../../src/ingest/pipeline-input.ts';
import { ReceiverConfigSchema, type ReceiverConfig } from '../../src/ingest/otlp/receiver-config.ts';
import { SpanWal } from '../../src/ingest/wal/span-wal.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { type OtlpTransport, otlpDeliverySource, type ServedReceiver } from './otlp-transports.ts';
import { runSourceDeliveryContract } from './source-delivery.contract.ts';

/** gRPC codes, written out here so the map in `export-status.ts` is checked, not copied. */
const OK = 0;
const INVALID_ARGUMENT = 3;
const RESOURCE_EXHAUSTED = 8;
const UNAVAILABLE = 14;
const UNIMPLEMENTED = 12;
const INTERNAL = 13;
const UNAUTHENTICATED = 16;

const TOKEN_ENV = 'TRAJWATCH_CONTRACT_TOKEN';

/** An ExportTraceServiceRequest as the OpenTelemetry JS SDK encodes it: one trace, `spans` spans. */
async function sdkRequest(spans: number, padChars = 0): Promise<Uint8Array> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('trajwatch-contract');
  const root = tracer.startSpan('root');
  // No context manager is registered: the parent is given explicitly.
  for (let i = 1; i < spans; i++) tracer.startSpan(`child-${i}`, {}, trace.setSpan(ROOT_CONTEXT, root)).end();
  if (padChars > 0) root.setAttribute('pad', 'x'.repeat(padChars));
  root.end();
  await provider.forceFlush();
  return ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!;
}

/** An ExportLogsServiceRequest as the OpenTelemetry JS logs SDK encodes it: `records` application logs. */
async function sdkLogsRequest(records: number): Promise<Uint8Array> {
  const exporter = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
  const logger = provider.getLogger('trajwatch-contract');
  for (let i = 0; i < records; i++) logger.emit({ body: `application log ${i}` });
  await provider.forceFlush();
  await new Promise((resolve) => setImmediate(resolve)); // the simple processor exports in a later turn
  return ProtobufLogsSerializer.serializeRequest(exporter.getFinishedLogRecords())!;
}

function newPipeline(assembler: Record<string, unknown> = {}): Pipeline {
  return new Pipeline({
    limits: AssemblerLimitsSchema.parse({ quietPeriodMs: 600_000, ...assembler }),
    clock: 'arrival',
    analyze: () => ({ checks: { l0: [], repetition: { status: 'unavailable', reasons: ['not analyzed'] }, silenced: [] }, findings: [] }),
    sinks: [],
  });
}

/**
 * One suite over every OTLP source transport (Hono's `runTest`): the same outcome gets the
 * same answer on each — the map of `src/ingest/otlp/export-status.ts` — and bad input loses
 * nothing accepted before it. Each transport's own test calls this with its adapter
 * (`otlp-transports.ts`: the receiver on a real socket, a real client for it). What every
 * source keeps, the Kafka source too, runs first (`source-delivery.contract.ts`).
 */
export function runSourceContract(transport: OtlpTransport): void {
  runSourceDeliveryContract(otlpDeliverySource(transport));
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const serve = async (target: PipelineInput, receiver: Record<string, unknown> = {}): Promise<ServedReceiver> => {
    const config: ReceiverConfig = ReceiverConfigSchema.parse({ retryAfterSeconds: 3, ...receiver });
    const served = await transport.serve(target, config);
    cleanups.push(() => served.close());
    return served;
  };
  /** The real pipeline behind a target whose admission a test can force (a sink behind). */
  const steerable = (pipeline: Pipeline) => {
    let forced: string | undefined;
    const target: PipelineInput = {
      admission: () => forced ?? pipeline.admission(),
      accept: (r) => pipeline.accept(r),
      acceptLogs: (r) => pipeline.acceptLogs(r),
    };
    return { target, refuse: (reason: string | undefined) => (forced = reason) };
  };

  describe(`${transport.name} keeps the source contract`, () => {
    it('accepts an SDK-encoded request: OK / 200, every span handed to the pipeline', async () => {
      const pipeline = newPipeline();
      const receiver = await serve(pipeline);
      expect(await receiver.export(await sdkRequest(3))).toEqual({ code: OK, ...(transport.name === 'OTLP/HTTP' ? { httpStatus: 200 } : {}), message: '' });
      expect(pipeline.counts.spansAccepted).toBe(3);
    });

    it('backpressure from a sink or log: UNAVAILABLE (HTTP 503) with a retry delay, nothing taken; accepted again once it clears', async () => {
      const pipeline = newPipeline();
      const { target, refuse } = steerable(pipeline);
      const receiver = await serve(target);
      refuse('findings-log-backlog');
      const answer = await receiver.export(await sdkRequest(2));
      expect(answer).toMatchObject({ code: UNAVAILABLE, retryAfterSeconds: 3, message: expect.stringMatching(/findings-log-backlog/) });
      if (answer.httpStatus !== undefined) expect(answer.httpStatus).toBe(503);
      expect(pipeline.counts.spansAccepted).toBe(0);
      refuse(undefined);
      expect((await receiver.export(await sdkRequest(2))).code).toBe(OK);
      expect(pipeline.counts.spansAccepted).toBe(2);
    });

    it('backpressure at a memory bound: RESOURCE_EXHAUSTED (HTTP 503) with a retry delay, nothing half-accepted', async () => {
      const pipeline = newPipeline({ maxOpenTrajectories: 1 });
      const receiver = await serve(pipeline);
      expect((await receiver.export(await sdkRequest(1))).code).toBe(OK);
      const answer = await receiver.export(await sdkRequest(1)); // a second trace: a second trajectory
      expect(answer).toMatchObject({ code: RESOURCE_EXHAUSTED, retryAfterSeconds: 3, message: expect.stringMatching(/max-open-trajectories/) });
      if (answer.httpStatus !== undefined) expect(answer.httpStatus).toBe(503);
      expect(pipeline.counts.spansAccepted).toBe(1);
    });

    it('auth: UNAUTHENTICATED (HTTP 401) without the token or with another, no retry delay; OK with it', async () => {
      process.env[TOKEN_ENV] = 'contract-secret';
      cleanups.push(() => delete process.env[TOKEN_ENV]);
      const pipeline = newPipeline();
      const receiver = await serve(pipeline, { auth: { tokenEnv: TOKEN_ENV } });
      const body = await sdkRequest(1);
      for (const token of [undefined, 'not-the-secret']) {
        const answer = await receiver.export(body, token === undefined ? {} : { token });
        expect(answer.code).toBe(UNAUTHENTICATED);
        expect(answer.retryAfterSeconds).toBeUndefined();
        if (answer.httpStatus !== undefined) expect(answer.httpStatus).toBe(401);
      }
      expect(pipeline.counts.spansAccepted).toBe(0);
      expect((await receiver.export(body, { token: 'contract-secret' })).code).toBe(OK);
      expect(pipeline.counts.spansAccepted).toBe(1);
    });

    it('limits: over maxDecompressedBytes, plain or as a gzip bomb, is RESOURCE_EXHAUSTED (HTTP 413) with no retry delay and keeps nothing', async () => {
      const pipeline = newPipeline();
      const receiver = await serve(pipeline, { maxDecompressedBytes: 4096 });
      const big = await sdkRequest(1, 20_000);
      for (const gzip of [false, true]) {
        const answer = await receiver.export(big, { gzip });
        expect(answer.code).toBe(RESOURCE_EXHAUSTED);
        expect(answer.retryAfterSeconds).toBeUndefined();
        if (answer.httpStatus !== undefined) expect(answer.httpStatus).toBe(413);
      }
      expect(pipeline.counts.spansAccepted).toBe(0);
      expect((await receiver.export(await sdkRequest(2), { gzip: true })).code).toBe(OK);
      expect(pipeline.counts.spansAccepted).toBe(2);
    });

    it('bad input: INVALID_ARGUMENT (HTTP 400) saying why, no retry delay, and what was accepted before it is still held', async () => {
      const pipeline = newPipeline();
      const receiver = await serve(pipeline);
      expect((await receiver.export(await sdkRequest(2))).code).toBe(OK);
      // Field 1 (resource_spans), length-delimited, claiming 100 bytes of which 1 follows.
      const answer = await receiver.export(Uint8Array.from([0x0a, 0x64, 0x00]));
      expect(answer).toMatchObject({ code: INVALID_ARGUMENT, message: expect.stringMatching(/undecodable/) });
      expect(answer.retryAfterSeconds).toBeUndefined();
      if (answer.httpStatus !== undefined) expect(answer.httpStatus).toBe(400);
      expect(pipeline.counts.spansAccepted).toBe(2);
      expect(pipeline.assembler.stats().openTrajectories).toBe(1);
    });

    it('a bug behind the receiver: INTERNAL (HTTP 500), not a hang and not a retryable answer', async () => {
      const target: PipelineInput = {
        admission: () => undefined,
        accept: () => {
          throw new Error('contract: a broken target');
        },
      };
      const receiver = await serve(target);
      const answer = await receiver.export(await sdkRequest(1));
      expect(answer.code).toBe(INTERNAL);
      expect(answer.retryAfterSeconds).toBeUndefined();
      if (answer.httpStatus !== undefined) expect(answer.httpStatus).toBe(500);
    });

    describe('logs exports, answered from the same map', () => {
      it('accepts SDK-encoded log records; refuses with UNAVAILABLE (HTTP 503) and a retry delay under backpressure; INVALID_ARGUMENT (HTTP 400) for bad input', async () => {
        const pipeline = newPipeline();
        const { target, refuse } = steerable(pipeline);
        const receiver = await serve(target);
        const body = await sdkLogsRequest(2);
        expect((await receiver.export(body, { signal: 'logs' })).code).toBe(OK);
        expect(pipeline.logCounts.notContentEvent).toBe(2);
        refuse('trajectory-log-backlog');
        const busy = await receiver.export(body, { signal: 'logs' });
        expect(busy).toMatchObject({ code: UNAVAILABLE, retryAfterSeconds: 3, message: expect.stringMatching(/trajectory-log-backlog/) });
        if (busy.httpStatus !== undefined) expect(busy.httpStatus).toBe(503);
        refuse(undefined);
        const bad = await receiver.export(Uint8Array.from([0x0a, 0x64, 0x00]), { signal: 'logs' });
        expect(bad).toMatchObject({ code: INVALID_ARGUMENT, message: expect.stringMatching(/undecodable/) });
        if (bad.httpStatus !== undefined) expect(bad.httpStatus).toBe(400);
        expect(pipeline.logCounts.notContentEvent).toBe(2);
      });

      it('a target that takes no logs: UNIMPLEMENTED (HTTP 404), not retried', async () => {
        const pipeline = newPipeline();
        const receiver = await serve({ admission: () => pipeline.admission(), accept: (r) => pipeline.accept(r) });
        const answer = await receiver.export(await sdkLogsRequest(1), { signal: 'logs' });
        expect(answer.code).toBe(UNIMPLEMENTED);
        expect(answer.retryAfterSeconds).toBeUndefined();
        if (answer.httpStatus !== undefined) expect(answer.httpStatus).toBe(404);
      });
    });

    describe('with the write-ahead log (DurableIngest)', () => {
      const openWal = async (maxBytes = 1 << 20) => {
        const dir = await mkdtemp(join(tmpdir(), 'trajwatch-source-contract-'));
        cleanups.push(() => rm(dir, { recursive: true, force: true }));
        const options = { maxBytes, segmentBytes: 1 << 16 };
        const { wal } = await SpanWal.open(join(dir, 'wal'), options);
        return { walDir: join(dir, 'wal'), options, wal };
      };

      it('an acknowledged request survives a restart: replayed into a new pipeline, every span', async () => {
        const { walDir, options, wal } = await openWal();
        const ingest = new DurableIngest(newPipeline(), wal);
        cleanups.push(() => ingest.close());
        const receiver = await serve(ingest);
        expect((await receiver.export(await sdkRequest(3))).code).toBe(OK);
        // The first process "dies" here (nothing flushed or closed): a second opens the directory.
        const reopened = await SpanWal.open(walDir, options);
        const restarted = newPipeline();
        const again = new DurableIngest(restarted, reopened.wal);
        cleanups.push(() => again.close());
        expect(await again.replay(reopened.records)).toEqual({ replayed: 1, undecodable: 0 });
        expect(restarted.counts.spansAccepted).toBe(3);
      });

      it('a request the log cannot take: UNAVAILABLE (HTTP 503) with a retry delay, and the pipeline never saw it', async () => {
        const { wal } = await openWal(1024);
        const pipeline = newPipeline();
        const ingest = new DurableIngest(pipeline, wal);
        cleanups.push(() => ingest.close());
        const receiver = await serve(ingest);
        const answer = await receiver.export(await sdkRequest(1, 2_000));
        expect(answer).toMatchObject({ code: UNAVAILABLE, retryAfterSeconds: 3, message: expect.stringMatching(/wal-full/) });
        if (answer.httpStatus !== undefined) expect(answer.httpStatus).toBe(503);
        expect(pipeline.counts.spansAccepted).toBe(0);
      });

      it('a durable append that fails is refused with its reason, never acknowledged', async () => {
        const pipeline = newPipeline();
        const target: PipelineInput = {
          admission: () => undefined,
          accept: (r) => pipeline.accept(r),
          acceptDurably: async () => ({ refused: 'wal-unwritable' }),
        };
        const receiver = await serve(target);
        const answer = await receiver.export(await sdkRequest(1));
        expect(answer).toMatchObject({ code: UNAVAILABLE, retryAfterSeconds: 3, message: expect.stringMatching(/wal-unwritable/) });
        expect(pipeline.counts.spansAccepted).toBe(0);
      });
    });
  });
}
