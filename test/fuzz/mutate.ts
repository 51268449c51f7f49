/**
 * Mutations of seed bodies as fast-check arbitraries: byte edits, splices within the body,
 * hostile tokens (invalid UTF-8, runaway varints, deep nesting, huge numbers), swapped
 * content types and gzip. Shared by the fast fuzz tests and `scripts/bench/fuzz.ts`.
 */
import { Buffer } from 'node:buffer';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { BodyFormat, Seed } from './corpus.ts';

export type Mutation =
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: number[] }
  | { kind: 'delete'; at: number; count: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'splice'; from: number; to: number; count: number }
  | { kind: 'token'; at: number; replace: number; token: number };

/** Byte strings that decoders tend to get wrong. */
export const HOSTILE_TOKENS: readonly Buffer[] = [
  Buffer.from([0xc3, 0x28]), // invalid UTF-8 continuation
  Buffer.from([0xed, 0xa0, 0x80]), // a UTF-16 surrogate encoded as UTF-8
  Buffer.from([0xff, 0xfe, 0xfd]),
  Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), // 11-byte varint
  Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), // length-delimited field claiming 4 GiB
  Buffer.from([0x12, 0x80, 0x80, 0x80, 0x80, 0x10]), // length past the end
  Buffer.from([0x00]),
  Buffer.from('"\\ud800"'),
  Buffer.from('1e400'),
  Buffer.from('-9223372036854775809'),
  Buffer.from('18446744073709551616'),
  Buffer.from('null'),
  Buffer.from('{}'),
  Buffer.from('[]'),
  Buffer.from('"'),
  Buffer.from('{"arrayValue":{"values":['.repeat(200)),
  Buffer.from('['.repeat(5_000)),
  Buffer.from('"traceId":"00000000000000000000000000000000"'),
  Buffer.from('"startTimeUnixNano":"99999999999999999999999"'),
];

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 12 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('splice' as const), from: fc.nat(), to: fc.nat(), count: fc.integer({ min: 1, max: 256 }) }),
  fc.record({ kind: fc.constant('token' as const), at: fc.nat(), replace: fc.integer({ min: 0, max: 16 }), token: fc.nat() }),
);

/** Applies the mutations in order; pure (the seed is not touched). */
export function mutate(original: Buffer, mutations: readonly Mutation[]): Buffer {
  let b = original;
  for (const m of mutations) {
    const n = b.length;
    if (m.kind === 'set') {
      if (n === 0) continue;
      b = Buffer.from(b);
      b[m.at % n] = m.byte;
    } else if (m.kind === 'insert') {
      const at = n === 0 ? 0 : m.at % (n + 1);
      b = Buffer.concat([b.subarray(0, at), Buffer.from(m.bytes), b.subarray(at)]);
    } else if (m.kind === 'delete') {
      if (n === 0) continue;
      const at = m.at % n;
      b = Buffer.concat([b.subarray(0, at), b.subarray(at + m.count)]);
    } else if (m.kind === 'truncate') {
      b = b.subarray(0, n === 0 ? 0 : m.at % n);
    } else if (m.kind === 'splice') {
      // Copy a slice of the body elsewhere: repeats fields, nests messages in odd places.
      if (n === 0) continue;
      const from = m.from % n;
      const to = m.to % (n + 1);
      b = Buffer.concat([b.subarray(0, to), b.subarray(from, from + m.count), b.subarray(to)]);
    } else {
      const at = n === 0 ? 0 : m.at % (n + 1);
      const token = HOSTILE_TOKENS[m.token % HOSTILE_TOKENS.length]!;
      b = Buffer.concat([b.subarray(0, at), token, b.subarray(at + m.replace)]);
    }
  }
  return b;
}

/** One fuzzed request: the body as sent, the content type claimed and whether it is gzipped. */
export interface FuzzBody {
  seed: string;
  format: BodyFormat;
  gzip: boolean;
  body: Buffer;
}

/**
 * Mutated bodies from `seeds`. One in ten claims the other content type (JSON bytes sent as
 * protobuf and the reverse); one in eight is gzipped, sometimes after a truncation of the
 * compressed stream.
 */
export function fuzzBody(seeds: readonly Seed[]): fc.Arbitrary<FuzzBody> {
  return fc
    .record({
      which: fc.nat(),
      mutations: fc.array(mutation, { minLength: 1, maxLength: 6 }),
      flip: fc.nat({ max: 9 }),
      gzip: fc.nat({ max: 7 }),
      cutGzip: fc.option(fc.nat(), { freq: 4 }),
    })
    .map(({ which, mutations, flip, gzip, cutGzip }) => {
      const seed = seeds[which % seeds.length]!;
      const format: BodyFormat = flip === 0 ? (seed.format === 'json' ? 'protobuf' : 'json') : seed.format;
      let body = mutate(seed.body, mutations);
      const gzipped = gzip === 0;
      if (gzipped) {
        body = gzipSync(body);
        if (cutGzip !== null) body = body.subarray(0, cutGzip % (body.length + 1));
      }
      return { seed: seed.name, format, gzip: gzipped, body };
    });
}

export const CONTENT_TYPE: Readonly<Record<BodyFormat, string>> = {
  json: 'application/json',
  protobuf: 'application/x-protobuf',
};

/** Statuses the receiver may answer a fuzzed body with; anything else is a failure. */
export const VALID_STATUSES: ReadonlySet<number> = new Set([200, 400, 413, 415, 429, 503]);
