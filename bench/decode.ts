/**
 * Decoder benchmark: spans per second of the hand-written OTLP/protobuf decoder, protobufjs
 * (reflection over the real schema) and the OTLP/JSON decoder, on (a) the 26 real TRAIL
 * traces and (b) synthetic small agent spans.
 *
 * Run: node_modules/.bin/node bench/decode.ts [secondsPerCase]   (default 1; best of 5 slices)
 */
import { fileURLToPath } from 'node:url';
import { decodeOtlpJson } from '../src/ingest/otlp/json-decode.ts';
import { decodeOtlpProto } from '../src/ingest/otlp/proto-decode.ts';
import { decodeWithProtobufjs, decodeWithProtobufjsRaw, exportTraceServiceRequest } from '../test/fixtures/otlp/protobufjs-codec.ts';
import { type Dataset, describeDataset, jsonBytes, protoBytes, syntheticDataset, trailDataset } from './datasets.ts';
import { fmt, markdownTable, measureCases } from './measure.ts';

interface Decoder {
  name: string;
  run: (dataset: Dataset) => unknown;
  bytes: (dataset: Dataset) => number;
}

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

/** One row per dataset and decoder: spans and input MB per CPU-second. */
export async function decoderRows(datasets: readonly Dataset[], seconds: number): Promise<string[][]> {
  const rows: string[][] = [];
  for (const dataset of datasets) {
    const rates = await measureCases(
      decoders.map((d) => ({ name: d.name, run: () => d.run(dataset) })),
      seconds,
    );
    decoders.forEach((decoder, i) => {
      const rounds = rates[i]!;
      rows.push([dataset.name, decoder.name, fmt(rounds * dataset.spanCount), ((rounds * decoder.bytes(dataset)) / 1e6).toFixed(1)]);
    });
  }
  void sink;
  return rows;
}

export const DECODER_HEADER = ['dataset', 'decoder', 'spans/CPU-s', 'MB/CPU-s (input)'];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const seconds = Number(process.argv[2] ?? 1);
  const datasets = [trailDataset(), syntheticDataset(1000, 10), syntheticDataset(10, 200)];
  console.log(`node ${process.version}, ${seconds}s per case, best of 5 interleaved slices`);
  for (const dataset of datasets) console.log(describeDataset(dataset));
  console.log(markdownTable(DECODER_HEADER, await decoderRows(datasets, seconds), 2));
}
