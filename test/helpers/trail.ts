import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { trailCorpus } from './trail-corpus.ts';

/** The `.otlp.json.gz` paths of this run's TRAIL dev traces (`trail-corpus.ts` says which), sorted by trace id. */
export function trailFiles(): string[] {
  return trailCorpus().files.map((f) => f.otlpPath);
}

export interface RawSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
  events?: { name: string }[];
  status?: { code?: number; message?: string };
}

/** The raw OTLP/JSON spans of one TRAIL file, read independently of trajwatch's decoder. */
export function rawSpans(file: string): RawSpan[] {
  const request = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as {
    resourceSpans: { scopeSpans: { spans: RawSpan[] }[] }[];
  };
  return request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}

export function stringAttr(span: RawSpan, key: string): string | undefined {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : (v.stringValue as string | undefined);
}
