/**
 * No false unread-convention gap: every span of the real captures kept in the repository (the
 * framework matrix's recordings, the replay captures, the TRAIL traces) is read by a known
 * mapper or is an ordinary `other` span (HTTP clients, framework chains and wrappers), and
 * none of them may be taken for tool or model work in an unread convention.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeOtlpJson } from '../../src/ingest/otlp-json-decode.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp-proto-decode.ts';
import { readOtlpFile } from '../../src/ingest/otlp-file.ts';
import type { Span } from '../../src/ingest/span.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import { trailCorpus } from '../helpers/trail-corpus.ts';

const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;

async function corpusSpans(): Promise<Map<string, Span[]>> {
  const out = new Map<string, Span[]>();
  for (const file of readdirSync(FIXTURES + 'frameworks').filter((f) => f.endsWith('.traces.pb.gz'))) {
    const requests = await readOtlpFile(`${FIXTURES}frameworks/${file}`);
    if (requests instanceof Error) throw requests;
    out.set(`frameworks/${file}`, requests.flatMap((r) => (r.signal === 'traces' ? r.request.spans : [])));
  }
  for (const dir of readdirSync(FIXTURES + 'captures')) {
    for (const file of readdirSync(`${FIXTURES}captures/${dir}`).filter((f) => f.endsWith('.pb'))) {
      const decoded = decodeOtlpProto(readFileSync(`${FIXTURES}captures/${dir}/${file}`));
      if (decoded instanceof Error) throw decoded;
      out.set(`captures/${dir}/${file}`, decoded.spans);
    }
  }
  for (const file of trailCorpus().files) {
    const decoded = decodeOtlpJson(gunzipSync(readFileSync(file.otlpPath)).toString('utf8'));
    if (decoded instanceof Error) throw decoded;
    out.set(`trail-dev/${file.traceId}`, decoded.spans);
  }
  return out;
}

describe('unread-convention detection on the real captures', async () => {
  const corpus = await corpusSpans();
  it('has the captures and their generic spans to look at', () => {
    expect(corpus.size).toBeGreaterThanOrEqual(20);
    const generic = [...corpus.values()].flat().map(normalizeSpan).filter((s) => s.convention === 'generic');
    expect(generic.length).toBeGreaterThan(20);
  });
  for (const [name, spans] of corpus) {
    it(`${name}: no span becomes an unread-convention step`, () => {
      const flagged = spans.map(normalizeSpan).filter((s) => s.unreadConvention !== undefined);
      expect(flagged.map((s) => `${s.name} (${s.convention}): ${s.unreadConvention}`)).toEqual([]);
    });
  }
});
