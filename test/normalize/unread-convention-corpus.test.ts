/**
 * Unread-convention detection on the real captures kept in the repository (the framework
 * matrix's recordings, the replay captures, the TRAIL traces). No false gap: every span of a
 * capture in a convention trajwatch reads is read by its mapper or is an ordinary `other` span
 * (HTTP clients, framework chains and wrappers), and none may be taken for tool or model work
 * in an unread convention. And no silence: in the MLflow capture (a convention trajwatch does
 * not read), exactly its tool and model spans are.
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
  /** Captures in a convention trajwatch does not read, with the spans that must be flagged. */
  const UNREAD: Record<string, (span: Span) => boolean> = {
    // MLflow writes its span type as JSON text; TOOL and CHAT_MODEL are tool and model work,
    // its AGENT and CHAIN spans are not (no tool call can hide in them).
    'frameworks/mlflow.traces.pb.gz': (span) => ['"TOOL"', '"CHAT_MODEL"'].includes(String(span.attributes['mlflow.spanType'])),
  };
  it('the MLflow capture flags exactly its tool and model spans, with the attribute that says so', () => {
    const spans = corpus.get('frameworks/mlflow.traces.pb.gz')!;
    const steps = spans.map(normalizeSpan);
    const flagged = steps.filter((s) => s.unreadConvention !== undefined);
    expect(flagged.map((s) => s.id)).toEqual(spans.filter(UNREAD['frameworks/mlflow.traces.pb.gz']!).map((s) => s.spanId));
    expect(new Set(flagged.map((s) => s.unreadConvention))).toEqual(new Set(['mlflow.spanType=TOOL', 'mlflow.spanType=CHAT_MODEL']));
    expect(flagged.length).toBe(10);
  });
  for (const [name, spans] of corpus) {
    if (UNREAD[name] !== undefined) continue;
    it(`${name}: no span becomes an unread-convention step`, () => {
      const flagged = spans.map(normalizeSpan).filter((s) => s.unreadConvention !== undefined);
      expect(flagged.map((s) => `${s.name} (${s.convention}): ${s.unreadConvention}`)).toEqual([]);
    });
  }
});
