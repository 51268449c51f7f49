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
import { decodeOtlpJson } from '../../src/ingest/otlp/json-decode.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp/proto-decode.ts';
import { readOtlpFile } from '../../src/ingest/otlp/file.ts';
import type { Span } from '../../src/ingest/span.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import { Assembler } from '../../src/assemble/assembler.ts';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { findingsFromChecks } from '../../src/findings/from-checks.ts';
import { buildManifest } from '../../src/findings/manifest.ts';
import { parseProvenanceConfig } from '../../src/findings/provenance/config.ts';
import { deriveProvenance } from '../../src/findings/provenance/derive.ts';
import { trailCorpus } from '../helpers/trail-corpus.ts';

const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;

async function corpusSpans(): Promise<Map<string, Span[]>> {
  const out = new Map<string, Span[]>();
  for (const file of readdirSync(FIXTURES + 'frameworks').filter((f) => f.endsWith('.traces.pb.gz'))) {
    const requests = await readOtlpFile(`${FIXTURES}frameworks/${file}`);
    if (requests instanceof Error) throw requests;
    out.set(
      `frameworks/${file}`,
      requests.flatMap((r) => (r.signal === 'traces' ? r.request.spans : [])),
    );
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
    const generic = [...corpus.values()]
      .flat()
      .map(normalizeSpan)
      .filter((s) => s.convention === 'generic');
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
  it('the MLflow capture, assembled and analyzed: one complete trajectory whose manifest claims no tool absence', () => {
    const closed: Trajectory[] = [];
    const assembler = new Assembler(AssemblerLimitsSchema.parse({}), (t) => closed.push(t));
    for (const span of corpus.get('frameworks/mlflow.traces.pb.gz')!) assembler.add(normalizeSpan(span), 0);
    assembler.flush('end-of-input', 0);
    expect(closed).toHaveLength(1);
    const t = closed[0]!;
    const checks = runChecks(t, checksConfigSchema.parse({}));
    const provenance = deriveProvenance(t, parseProvenanceConfig({}));
    const findings = findingsFromChecks(t, checks, provenance);
    const byCheck = Object.fromEntries(
      buildManifest({ trajectory: t, checks, findings, provenance, judge: 'disabled', windows: [] }).checks.map((c) => [c.check, c]),
    );
    expect(t.complete).toBe(true);
    for (const check of ['tool-repetition', 'unguarded-send', 'out-of-order-gate']) {
      expect(byCheck[check], check).toMatchObject({ status: 'unavailable', reason: 'unread-convention' });
    }
  });
  for (const [name, spans] of corpus) {
    if (UNREAD[name] !== undefined) continue;
    it(`${name}: no span becomes an unread-convention step`, () => {
      const flagged = spans.map(normalizeSpan).filter((s) => s.unreadConvention !== undefined);
      expect(flagged.map((s) => `${s.name} (${s.convention}): ${s.unreadConvention}`)).toEqual([]);
    });
  }
});
