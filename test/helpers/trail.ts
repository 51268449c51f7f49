import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/** The 26 real TRAIL dev traces shared with the project (never copied into it). */
export const TRAIL_DIR = new URL('../../../shared/fixtures/trail-dev/', import.meta.url).pathname;

export function trailFiles(): string[] {
  return readdirSync(TRAIL_DIR)
    .filter((f) => f.endsWith('.otlp.json.gz'))
    .sort()
    .map((f) => join(TRAIL_DIR, f));
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
