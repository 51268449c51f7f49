/**
 * Seed bodies for the fuzzers: the run's real TRAIL traces (whole and cut into small requests;
 * the 26 with ../shared beside the checkout, the five in-repo ones without),
 * real OTel JS SDK exports, and the benchmark's synthetic GenAI spans, each as OTLP/JSON and
 * OTLP/protobuf.
 */
import { Buffer } from 'node:buffer';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { syntheticRequest, syntheticRequestProto } from '../../bench/synthetic-spans.ts';
import { encodeOtlpJsonAsProto } from '../fixtures/otlp/protobufjs-codec.ts';
import { produceSdkSpans } from '../fixtures/otlp/sdk-spans.ts';
import { loadTrailTraces } from '../fixtures/otlp/trail-traces.ts';

export type BodyFormat = 'json' | 'protobuf';

export interface Seed {
  name: string;
  format: BodyFormat;
  body: Buffer;
}

interface JsonRequest {
  resourceSpans: { resource?: unknown; scopeSpans: { scope?: unknown; spans: unknown[] }[] }[];
}

/** Spans per small request cut from a TRAIL trace: small bodies keep a million runs affordable. */
const SPANS_PER_CUT = 4;

/** Every request of `request`'s spans in groups of `SPANS_PER_CUT`, keeping resource and scope. */
function cut(request: JsonRequest): JsonRequest[] {
  const out: JsonRequest[] = [];
  for (const rs of request.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (let i = 0; i < ss.spans.length; i += SPANS_PER_CUT) {
        out.push({ resourceSpans: [{ resource: rs.resource, scopeSpans: [{ scope: ss.scope, spans: ss.spans.slice(i, i + SPANS_PER_CUT) }] }] });
      }
    }
  }
  return out;
}

function both(name: string, request: unknown): Seed[] {
  return [
    { name: `${name}.json`, format: 'json', body: Buffer.from(JSON.stringify(request)) },
    { name: `${name}.pb`, format: 'protobuf', body: Buffer.from(encodeOtlpJsonAsProto(request)) },
  ];
}

/**
 * Loads the seed corpus. `wholeTrail` adds the full TRAIL traces (tens of KB each) beside
 * their small cuts; the long run leaves them to a fraction of the bodies.
 */
export async function loadSeeds(options: { wholeTrail?: boolean } = {}): Promise<Seed[]> {
  const seeds: Seed[] = [];
  for (const trace of loadTrailTraces()) {
    const request = JSON.parse(trace.jsonText) as JsonRequest;
    if (options.wholeTrail === true) seeds.push(...both(`trail/${trace.name}`, request));
    // A few cuts per trace keep every trace represented without one trace dominating.
    const cuts = cut(request);
    const step = Math.max(1, Math.floor(cuts.length / 6));
    for (let i = 0; i < cuts.length; i += step) seeds.push(...both(`trail/${trace.name}#${i}`, cuts[i]));
  }
  const sdk = await produceSdkSpans();
  seeds.push({ name: 'sdk.json', format: 'json', body: Buffer.from(JsonTraceSerializer.serializeRequest(sdk)!) });
  seeds.push({ name: 'sdk.pb', format: 'protobuf', body: Buffer.from(ProtobufTraceSerializer.serializeRequest(sdk)!) });
  for (const [n, seed] of [
    [1, 1],
    [8, 2],
    [32, 3],
  ] as const) {
    const request = syntheticRequest(n, seed);
    seeds.push({ name: `synthetic-${n}.json`, format: 'json', body: Buffer.from(JSON.stringify(request)) });
    seeds.push({ name: `synthetic-${n}.pb`, format: 'protobuf', body: Buffer.from(syntheticRequestProto(request)) });
  }
  return seeds;
}
