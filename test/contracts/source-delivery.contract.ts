import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import type { PositionedInput } from '../../src/ingest/pipeline-input.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';

/** A source started in front of a target, and a producer of its input. */
export interface FedSource {
  /**
   * Hands one ExportTraceServiceRequest (protobuf) to the source the way its producers do: an
   * export call retried while it is refused with a retry delay, as an OTLP exporter does; a
   * record on the topic. Resolves once the request was answered or the record is on the topic.
   */
  send(body: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/** One source under the delivery contract: OTLP/HTTP, OTLP/gRPC, the Kafka source. */
export interface DeliverySource {
  name: string;
  /** Set to skip the suite, with the reason printed in its name. */
  skip?: string | undefined;
  start(target: PositionedInput): Promise<FedSource>;
}

/** How long a source may take to hand on what it was given (a consumer joins its group first). */
const DELIVERY_TIMEOUT_MS = 30_000;
/** How long a refused request is watched for a span that must not arrive. */
const REFUSAL_WATCH_MS = 500;

/** One trace of `spans` spans, encoded by the OpenTelemetry JS SDK. */
export async function sdkTraceRequest(spans: number): Promise<Uint8Array> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('trajwatch-contract');
  const root = tracer.startSpan('root');
  for (let i = 1; i < spans; i++) tracer.startSpan(`child-${i}`, {}, trace.setSpan(ROOT_CONTEXT, root)).end();
  root.end();
  await provider.forceFlush();
  return ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!;
}

/** Not protobuf a decoder can read: field 1, length-delimited, claiming 100 bytes of which 1 follows. */
export const UNDECODABLE = Uint8Array.from([0x0a, 0x64, 0x00]);

function newPipeline(): Pipeline {
  return new Pipeline({
    limits: AssemblerLimitsSchema.parse({ quietPeriodMs: 600_000 }),
    clock: 'arrival',
    analyze: () => ({ checks: { l0: [], repetition: { status: 'unavailable', reasons: ['not analyzed'] }, silenced: [] }, findings: [] }),
    sinks: [],
  });
}

/** The pipeline behind a target whose admission a test can force, as a sink behind would. */
function steerable(pipeline: Pipeline): { target: PositionedInput; refuse: (reason: string | undefined) => void } {
  let forced: string | undefined;
  const target: PositionedInput = {
    admission: () => forced ?? pipeline.admission(),
    accept: (r, position) => pipeline.accept(r, position),
    committable: () => pipeline.committable(),
    settled: () => pipeline.settled(),
    dropPartitions: (partitions) => pipeline.dropPartitions(partitions),
  };
  return { target, refuse: (reason) => (forced = reason) };
}

async function until(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What every source keeps, whether it answers requests (OTLP) or pulls records (Kafka): what
 * it is given reaches the pipeline once; while the pipeline refuses, it takes nothing and
 * loses nothing; bad input costs nothing accepted before it and stops nothing after it.
 * The transport's own answers (status codes, auth, limits) are `runSourceContract`'s.
 */
export function runSourceDeliveryContract(source: DeliverySource): void {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const start = async (target: PositionedInput): Promise<FedSource> => {
    const fed = await source.start(target);
    cleanups.push(() => fed.close());
    return fed;
  };

  describe.skipIf(source.skip !== undefined)(
    `${source.name} keeps the source delivery contract${source.skip === undefined ? '' : ` (skipped: ${source.skip})`}`,
    () => {
      it('every span of an SDK-encoded request reaches the pipeline, once', async () => {
        const pipeline = newPipeline();
        const fed = await start(steerable(pipeline).target);
        await fed.send(await sdkTraceRequest(3));
        await until('3 spans accepted', () => pipeline.counts.spansAccepted >= 3);
        await pause(100);
        expect(pipeline.counts.spansAccepted).toBe(3);
      });

      it('while the pipeline refuses, nothing is taken; once it accepts again, what was sent is taken, once', async () => {
        const pipeline = newPipeline();
        const { target, refuse } = steerable(pipeline);
        refuse('contract-refuses');
        const fed = await start(target);
        const sent = fed.send(await sdkTraceRequest(2));
        await pause(REFUSAL_WATCH_MS);
        expect(pipeline.counts.spansAccepted).toBe(0);
        refuse(undefined);
        await sent;
        await until('2 spans accepted', () => pipeline.counts.spansAccepted >= 2);
        await pause(100);
        expect(pipeline.counts.spansAccepted).toBe(2);
      });

      it('undecodable input loses nothing accepted before it, and what follows is still taken', async () => {
        const pipeline = newPipeline();
        const fed = await start(steerable(pipeline).target);
        await fed.send(await sdkTraceRequest(2));
        await fed.send(UNDECODABLE);
        await fed.send(await sdkTraceRequest(1));
        await until('3 spans accepted', () => pipeline.counts.spansAccepted >= 3);
        expect(pipeline.counts.spansAccepted).toBe(3);
        expect(pipeline.assembler.stats().openTrajectories).toBe(2);
      });
    },
  );
}
