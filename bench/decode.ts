/**
 * Decoder benchmark: spans per second of the hand-written OTLP/protobuf decoder, protobufjs
 * (reflection over the real schema) and the OTLP/JSON decoder, on (a) the 26 real TRAIL
 * traces and (b) synthetic small agent spans.
 *
 * Run: node_modules/.bin/node bench/decode.ts [secondsPerCase]   (default 1; best of 5 slices)
 */
import { Buffer } from 'node:buffer';
import { decodeOtlpJson } from '../src/ingest/otlp-json-decode.ts';
import { decodeOtlpProto } from '../src/ingest/otlp-proto-decode.ts';
import { decodeWithProtobufjs, decodeWithProtobufjsRaw, encodeOtlpJsonAsProto, exportTraceServiceRequest } from '../test/fixtures/otlp/protobufjs-codec.ts';
import { loadTrailTraces } from '../test/fixtures/otlp/trail-traces.ts';
import { syntheticRequest, syntheticRequestProto } from './synthetic-spans.ts';

interface Dataset {
  name: string;
  spanCount: number;
  protoBodies: Uint8Array[];
  jsonTexts: string[];
}

function countSpans(request: any): number {
  return (request.resourceSpans as any[]).reduce(
    (sum, rs) => sum + (rs.scopeSpans as any[]).reduce((inner, ss) => inner + ss.spans.length, 0),
    0,
  );
}

function trailDataset(): Dataset {
  const traces = loadTrailTraces();
  const requests = traces.map((trace) => JSON.parse(trace.jsonText));
  return {
    name: `TRAIL (26 traces)`,
    spanCount: requests.reduce((sum, request) => sum + countSpans(request), 0),
    protoBodies: requests.map((request) => encodeOtlpJsonAsProto(request)),
    jsonTexts: traces.map((trace) => trace.jsonText),
  };
}

function syntheticDataset(spansPerRequest: number, requestCount: number): Dataset {
  const requests = Array.from({ length: requestCount }, (_, seed) => syntheticRequest(spansPerRequest, seed + 1));
  return {
    name: `synthetic ${requestCount}x${spansPerRequest} spans`,
    spanCount: spansPerRequest * requestCount,
    protoBodies: requests.map(syntheticRequestProto),
    jsonTexts: requests.map((request) => JSON.stringify(request)),
  };
}

interface Decoder {
  name: string;
  run: (dataset: Dataset) => unknown;
  bytes: (dataset: Dataset) => number;
}

const protoBytes = (d: Dataset) => d.protoBodies.reduce((sum, body) => sum + body.length, 0);
const jsonBytes = (d: Dataset) => d.jsonTexts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

let sink: unknown; // keeps results alive so the work cannot be optimized away

const decoders: Decoder[] = [
  {
    name: 'trajwatch proto (Span[])',
    bytes: protoBytes,
    run: (d) => {
      for (const body of d.protoBodies) sink = decodeOtlpProto(body);
    },
  },
  {
    name: 'protobufjs decode (message tree only)',
    bytes: protoBytes,
    run: (d) => {
      for (const body of d.protoBodies) sink = decodeWithProtobufjsRaw(body);
    },
  },
  {
    name: 'protobufjs decode + toObject',
    bytes: protoBytes,
    run: (d) => {
      for (const body of d.protoBodies) {
        sink = exportTraceServiceRequest.toObject(exportTraceServiceRequest.decode(body), { longs: String, bytes: String, oneofs: true });
      }
    },
  },
  {
    // what a protobufjs-based decoder costs: the test's reference mapping to Span[],
    // including its second pass over the bytes for each span's encoded size
    name: 'protobufjs decode + map to Span[]',
    bytes: protoBytes,
    run: (d) => {
      for (const body of d.protoBodies) sink = decodeWithProtobufjs(body);
    },
  },
  {
    name: 'trajwatch JSON (parse + Span[])',
    bytes: jsonBytes,
    run: (d) => {
      for (const text of d.jsonTexts) sink = decodeOtlpJson(text);
    },
  },
  {
    name: 'JSON.parse alone (baseline)',
    bytes: jsonBytes,
    run: (d) => {
      for (const text of d.jsonTexts) sink = JSON.parse(text);
    },
  },
];

/**
 * Spans and MB per CPU second over one slice of `seconds` wall time. CPU time (this
 * process, all threads, so GC helpers count) rather than wall time, because the machine
 * is shared and wall time includes the time other processes ran.
 */
function measureOnce(decoder: Decoder, dataset: Dataset, seconds: number): { spansPerSecond: number; mbPerSecond: number } {
  let rounds = 0;
  const stopAt = performance.now() + seconds * 1000;
  const cpuStart = process.cpuUsage();
  while (performance.now() < stopAt) {
    decoder.run(dataset);
    rounds++;
  }
  const cpu = process.cpuUsage(cpuStart);
  const elapsedS = (cpu.user + cpu.system) / 1e6;
  return {
    spansPerSecond: (rounds * dataset.spanCount) / elapsedS,
    mbPerSecond: (rounds * decoder.bytes(dataset)) / elapsedS / 1e6,
  };
}

// Decoders run interleaved in several slices and each keeps its best slice: on a shared
// machine the best slice is the one least disturbed by other load.
const seconds = Number(process.argv[2] ?? 1);
const slices = 5;
const datasets = [trailDataset(), syntheticDataset(1000, 10), syntheticDataset(10, 200)];
const rows: string[][] = [];
for (const dataset of datasets) {
  for (const decoder of decoders) measureOnce(decoder, dataset, 0.3); // warm-up
  const best = decoders.map(() => ({ spansPerSecond: 0, mbPerSecond: 0 }));
  for (let slice = 0; slice < slices; slice++) {
    decoders.forEach((decoder, i) => {
      const result = measureOnce(decoder, dataset, seconds / slices);
      if (result.spansPerSecond > best[i]!.spansPerSecond) best[i] = result;
    });
  }
  decoders.forEach((decoder, i) => {
    rows.push([dataset.name, decoder.name, Math.round(best[i]!.spansPerSecond).toLocaleString('en-US'), best[i]!.mbPerSecond.toFixed(1)]);
  });
}
void sink;

const header = ['dataset', 'decoder', 'spans/CPU-s', 'MB/CPU-s (input)'];
const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((cell, i) => (i >= 2 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(' | ')} |`;
console.log(`node ${process.version}, ${seconds}s per case, best of ${slices} interleaved slices`);
for (const dataset of datasets) {
  console.log(`${dataset.name}: ${dataset.spanCount} spans, ${protoBytes(dataset)} B protobuf, ${jsonBytes(dataset)} B JSON`);
}
console.log(line(header));
console.log(line(widths.map((width) => '-'.repeat(width))));
for (const row of rows) console.log(line(row));
