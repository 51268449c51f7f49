import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { DecodeError, LimitError } from '../../src/errors.ts';
import { gunzipCapped } from '../../src/ingest/otlp/body.ts';
import { decodeOtlpJson } from '../../src/ingest/otlp/json-decode.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp/proto-decode.ts';
import type { DecodedRequest } from '../../src/ingest/span.ts';
import { trailCorpus } from '../helpers/trail-corpus.ts';
import { loadSeeds, type Seed } from './corpus.ts';
import { fuzzBody, type FuzzBody } from './mutate.ts';

/** A well-formed result: a DecodeError with a message, or spans and rejections as arrays. */
function wellFormed(result: DecodedRequest | DecodeError): boolean {
  if (result instanceof DecodeError) return result.message.length > 0;
  return (
    Array.isArray(result.spans) &&
    Array.isArray(result.rejected) &&
    result.spans.every((s) => /^[0-9a-f]{32}$/.test(s.traceId) && /^[0-9a-f]{16}$/.test(s.spanId) && s.encodedBytes >= 0)
  );
}

/** What the receiver does with a body before its handler: gunzip (capped), then decode. */
async function decodeLikeReceiver(b: FuzzBody): Promise<DecodedRequest | DecodeError | LimitError> {
  const body = b.gzip ? await gunzipCapped(b.body, 8 * 1024 * 1024) : b.body;
  if (body instanceof Error) return body;
  return b.format === 'protobuf' ? decodeOtlpProto(body) : decodeOtlpJson(body.toString('utf8'));
}

let seeds: Seed[];
beforeAll(async () => {
  seeds = await loadSeeds();
});

describe('fuzzing the OTLP decoders with mutated TRAIL, SDK and synthetic bodies (fast subset)', () => {
  it('the seed corpus decodes cleanly before mutation (so mutations start from real input)', () => {
    // every TRAIL trace of this run's corpus (26 with ../shared, the five in-repo without) is
    // represented in both encodings, beside the SDK and synthetic bodies
    for (const { traceId } of trailCorpus().files) {
      for (const ext of ['json', 'pb']) {
        expect(
          seeds.some((seed) => seed.name.startsWith(`trail/${traceId}.otlp.json.gz#`) && seed.name.endsWith(`.${ext}`)),
          `${traceId} .${ext}`,
        ).toBe(true);
      }
    }
    for (const name of ['sdk.json', 'sdk.pb', 'synthetic-32.json', 'synthetic-32.pb']) expect(seeds.map((seed) => seed.name)).toContain(name);
    for (const seed of seeds) {
      const decoded = seed.format === 'protobuf' ? decodeOtlpProto(seed.body) : decodeOtlpJson(seed.body.toString('utf8'));
      expect(decoded, seed.name).not.toBeInstanceOf(DecodeError);
      expect((decoded as DecodedRequest).spans.length, seed.name).toBeGreaterThan(0);
    }
  });

  it('never throws: every mutated body decodes to spans or a DecodeError (or a LimitError for a gzip bomb)', async () => {
    const outcomes = { decoded: 0, decodeError: 0, limit: 0 };
    await fc.assert(
      fc.asyncProperty(fuzzBody(seeds), async (b) => {
        const result = await decodeLikeReceiver(b);
        if (result instanceof LimitError) outcomes.limit++;
        else if (result instanceof DecodeError) outcomes.decodeError++;
        else outcomes.decoded++;
        expect(result instanceof LimitError || wellFormed(result)).toBe(true);
      }),
      { numRuns: 4_000, seed: 9 },
    );
    // Both branches are exercised: mutations that keep a body decodable and ones that break it.
    expect(outcomes.decoded).toBeGreaterThan(100);
    expect(outcomes.decodeError).toBeGreaterThan(100);
  });

  it('decoding the same mutated body twice gives the same answer (no hidden state), gzipped bodies too', async () => {
    const seen = { gzip: 0, plain: 0, decoded: 0 };
    // Twice in a row, then again after another body, so state left behind by a decode would show.
    const other = seeds[0]!;
    const decodeOther = () => (other.format === 'protobuf' ? decodeOtlpProto(other.body) : decodeOtlpJson(other.body.toString('utf8')));
    const answer = (r: DecodedRequest | DecodeError | LimitError) =>
      r instanceof Error ? { error: r.constructor.name, message: r.message } : { spans: r.spans, rejected: r.rejected };
    await fc.assert(
      fc.asyncProperty(fuzzBody(seeds), async (b) => {
        if (b.gzip) seen.gzip++;
        else seen.plain++;
        const first = await decodeLikeReceiver(b);
        const second = await decodeLikeReceiver(b);
        decodeOther();
        const third = await decodeLikeReceiver(b);
        if (!(first instanceof Error)) seen.decoded++;
        expect(answer(second)).toEqual(answer(first));
        expect(answer(third)).toEqual(answer(first));
      }),
      { numRuns: 500, seed: 10 },
    );
    expect(seen.gzip).toBeGreaterThan(20);
    expect(seen.plain).toBeGreaterThan(100);
    expect(seen.decoded).toBeGreaterThan(20);
  });
});
