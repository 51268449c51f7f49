import { Buffer } from 'node:buffer';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src/errors.ts';
import { decodeOtlpJson, decodeOtlpJsonValue } from '../../../src/ingest/otlp/json-decode.ts';
import { decodeOtlpProto } from '../../../src/ingest/otlp/proto-decode.ts';
import type { DecodedRequest } from '../../../src/ingest/span.ts';
import { attribute, concat, nestedArrayValue, request, spanFields } from '../../fixtures/otlp/proto-bytes.ts';
import { produceSdkSpans } from '../../fixtures/otlp/sdk-spans.ts';

/** A result is well-formed when it is a DecodeError or a request whose lists are arrays. */
function isWellFormed(result: DecodedRequest | DecodeError): boolean {
  if (result instanceof DecodeError) return result.message.length > 0;
  return (
    Array.isArray(result.spans) &&
    Array.isArray(result.rejected) &&
    result.spans.every((span) => typeof span.traceId === 'string' && typeof span.encodedBytes === 'number')
  );
}

type Mutation =
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: number[] }
  | { kind: 'delete'; at: number; count: number }
  | { kind: 'truncate'; at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 12 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 12 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);

function mutate(original: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let bytes = Array.from(original);
  for (const m of mutations) {
    const at = bytes.length === 0 ? 0 : m.at % bytes.length;
    if (m.kind === 'set') bytes[at] = m.byte;
    else if (m.kind === 'insert') bytes.splice(at, 0, ...m.bytes);
    else if (m.kind === 'delete') bytes.splice(at, m.count);
    else bytes = bytes.slice(0, at);
  }
  return Uint8Array.from(bytes);
}

let protoBodies: Uint8Array[];
let jsonText: string;

beforeAll(async () => {
  const spans = await produceSdkSpans();
  protoBodies = [
    ProtobufTraceSerializer.serializeRequest(spans)!,
    request(spanFields(), concat(spanFields({ name: 'nested' }), attribute('deep', nestedArrayValue(30)))),
  ];
  jsonText = Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString('utf8');
});

describe('decoders on randomly mutated input', () => {
  it('the protobuf decoder never throws and returns spans or a DecodeError', () => {
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 6 }), (which, mutations) => {
        const body = mutate(protoBodies[which % protoBodies.length]!, mutations);
        expect(isWellFormed(decodeOtlpProto(body))).toBe(true);
      }),
      { numRuns: 3_000 },
    );
  });

  it('the JSON decoder never throws on mutated text', () => {
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 6 }), (mutations) => {
        const text = Buffer.from(mutate(Buffer.from(jsonText, 'utf8'), mutations)).toString('utf8');
        expect(isWellFormed(decodeOtlpJson(text))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('the JSON decoder never throws when any part of a valid request is replaced by arbitrary JSON', () => {
    const paths: (string | number)[][] = [];
    const collect = (value: unknown, path: (string | number)[]): void => {
      paths.push(path);
      if (typeof value === 'object' && value !== null) {
        for (const [key, child] of Object.entries(value)) collect(child, [...path, Array.isArray(value) ? Number(key) : key]);
      }
    };
    collect(JSON.parse(jsonText), []);
    fc.assert(
      fc.property(fc.nat(), fc.jsonValue(), (which, replacement) => {
        const requestValue = JSON.parse(jsonText);
        const path = paths[which % paths.length]!;
        if (path.length === 0) {
          expect(isWellFormed(decodeOtlpJsonValue(replacement))).toBe(true);
          return;
        }
        let parent = requestValue;
        for (const step of path.slice(0, -1)) parent = parent[step];
        parent[path.at(-1)!] = replacement;
        expect(isWellFormed(decodeOtlpJsonValue(requestValue))).toBe(true);
      }),
      { numRuns: 3_000 },
    );
  });
});
