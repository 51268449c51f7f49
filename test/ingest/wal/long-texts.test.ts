import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../../src/errors.ts';
import { LongText, TextSource, textOf } from '../../../src/ingest/long-text.ts';
import { decodeOtlpProto } from '../../../src/ingest/otlp/proto-decode.ts';
import { lazyTextMinBytes } from '../../../src/ingest/otlp/proto-text.ts';
import type { AttrValue, DecodedRequest, Span } from '../../../src/ingest/span.ts';
import { SpanWal, type WalRecord } from '../../../src/ingest/wal/span-wal.ts';
import { normalizeSpan } from '../../../src/normalize/normalize.ts';
import { withTexts } from '../../../src/normalize/step-texts.ts';
import { spanFingerprint } from '../../../src/assemble/span-digests.ts';
import { encodeOtlpJsonAsProto } from '../../fixtures/otlp/protobufjs-codec.ts';
import { loadTrailTraces } from '../../fixtures/otlp/trail-traces.ts';

/** Real agent traces: long prompts and outputs, much of it non-ASCII somewhere. */
const bodies = loadTrailTraces().map((t) => Buffer.from(encodeOtlpJsonAsProto(JSON.parse(t.jsonText))));

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function decode(body: Buffer, lazy: boolean): DecodedRequest {
  const decoded = decodeOtlpProto(body, lazy ? new TextSource(body) : undefined);
  if (decoded instanceof Error) throw decoded;
  return decoded;
}

function longTexts(value: AttrValue | undefined, out: LongText[] = []): LongText[] {
  if (value instanceof LongText) out.push(value);
  else if (Array.isArray(value)) for (const v of value) longTexts(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) longTexts(v, out);
  return out;
}

const spanTexts = (s: Span): LongText[] => [...longTexts(s.attributes), ...s.events.flatMap((e) => longTexts(e.attributes))];

describe('long texts by reference', () => {
  it('decodes long span and event values as references whose text is the eager decode, and everything else as before', () => {
    let references = 0;
    for (const body of bodies) {
      const eager = decode(body, false);
      const lazy = decode(body, true);
      expect(lazy.spans.length).toBe(eager.spans.length);
      for (const [i, span] of lazy.spans.entries()) {
        const texts = spanTexts(span);
        references += texts.length;
        for (const t of texts) {
          expect(t.byteLength).toBeGreaterThanOrEqual(lazyTextMinBytes);
          expect(t.ascii).toBe(/^[\x00-\x7f]*$/.test(t.toString()));
        }
        // JSON.stringify writes a reference as its text: the span reads the same either way.
        expect(JSON.stringify(span, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).toBe(
          JSON.stringify(eager.spans[i], (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
        );
        expect(longTexts(span.resource)).toEqual([]);
      }
    }
    expect(references).toBeGreaterThan(100);
  });

  it('normalizes to the same step, holding references for input and result until withTexts gives their strings', () => {
    let referred = 0;
    for (const body of bodies) {
      const eager = decode(body, false).spans.map(normalizeSpan);
      const lazy = decode(body, true).spans.map(normalizeSpan);
      for (const s of lazy) if (s.input instanceof LongText || s.result instanceof LongText) referred += 1;
      // The fingerprint of a span let go reads a reference's summary, never its text: the same value.
      expect(lazy.map(spanFingerprint)).toEqual(eager.map(spanFingerprint));
      const closed = withTexts(lazy);
      for (const s of closed) {
        expect(s.input instanceof LongText).toBe(s.kind === 'llm' && s.input instanceof LongText);
        expect(s.result instanceof LongText).toBe(false);
      }
      expect(JSON.stringify(closed, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).toBe(
        JSON.stringify(eager, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
      );
    }
    expect(referred).toBeGreaterThan(20);
  });

  it('moves a logged request’s texts to its WAL segment, reads them back there, and again after a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tw-long-texts-'));
    dirs.push(dir);
    const options = { maxBytes: 64 * 1024 * 1024, segmentBytes: 256 * 1024 };
    const { wal } = await SpanWal.open(dir, options);
    const requests = bodies.map((body) => ({ body, decoded: decode(body, true), eager: decode(body, false) }));
    const appends = requests.map((r) => wal.append('protobuf', r.body, 'traces', r.decoded.texts));
    for (const a of appends) {
      if (!a.ok) throw new Error(a.reason);
      await a.durable;
    }
    expect((await readdir(dir)).filter((f) => f.endsWith('.wal')).length).toBeGreaterThanOrEqual(3);
    for (const r of requests) {
      expect(r.decoded.texts!.inMemory).toBe(false);
      for (const [i, span] of r.decoded.spans.entries()) {
        const eagerTexts = JSON.stringify(r.eager.spans[i]!.attributes);
        expect(JSON.stringify(span.attributes)).toBe(eagerTexts);
      }
    }
    expect(wal.textFiles).toBeGreaterThanOrEqual(3);
    await wal.close();

    const reopened = await SpanWal.open(dir, options);
    const replayed: WalRecord[] = [];
    for await (const r of reopened.records) replayed.push(r);
    expect(replayed.map((r) => r.seq)).toEqual(appends.map((a) => (a.ok ? a.seq : -1)));
    for (const [n, record] of replayed.entries()) {
      const texts = new TextSource(record.bytes);
      const decoded = decodeOtlpProto(record.bytes, texts) as DecodedRequest;
      record.moveTexts(texts);
      expect(texts.inMemory).toBe(false);
      expect(JSON.stringify(decoded.spans.map((s) => s.attributes))).toBe(JSON.stringify(requests[n]!.eager.spans.map((s) => s.attributes)));
    }
    await reopened.wal.close();
  });

  it('keeps released segments while retained steps refer to them, and a read of a deleted one is a StorageError, not a wrong text', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tw-long-texts-'));
    dirs.push(dir);
    const { wal } = await SpanWal.open(dir, { maxBytes: 64 * 1024 * 1024, segmentBytes: 256 * 1024 });
    const decoded = bodies.map((body) => {
      const d = decode(body, true);
      const a = wal.append('protobuf', body, 'traces', d.texts);
      if (!a.ok) throw new Error(a.reason);
      return { d, durable: a.durable, seq: a.seq };
    });
    for (const x of decoded) await x.durable;
    const first = decoded[0]!;
    const text = spanTexts(first.d.spans.find((s) => spanTexts(s).length > 0)!)[0]!;
    const expected = text.toString();
    const segments = async () => (await readdir(dir)).filter((f) => f.endsWith('.wal')).sort();
    const before = await segments();

    // Every request released (the mark may open a segment of its own), the first one referred to.
    wal.keepReferencedFrom(first.seq);
    await wal.release(decoded.at(-1)!.seq + 1);
    expect((await segments()).slice(0, before.length)).toEqual(before);
    expect(text.toString()).toBe(expected);

    wal.keepReferencedFrom(Number.POSITIVE_INFINITY);
    await wal.release(decoded.at(-1)!.seq + 2);
    expect(await segments()).not.toContain(before[0]);
    expect(() => text.toString()).toThrow(StorageError);
    expect(textOf('plain')).toBe('plain');
    await wal.close();
  });
});
