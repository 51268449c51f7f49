/**
 * The framework captures kept in test/fixtures/frameworks/ are whole, readable recordings:
 * each decodes with no rejected span and names the scripted tools (in its spans, or where the
 * instrumentation put message content in log records only, in the logs capture beside it).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readOtlpFile } from '../../src/ingest/otlp/file.ts';

const DIR = new URL('../fixtures/frameworks/', import.meta.url).pathname;
const files = (await readdir(DIR)).filter((f) => f.endsWith('.traces.pb.gz'));

describe('framework captures', () => {
  it('are there, one per Python framework run', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });
  for (const file of files) {
    it(`${file} decodes whole and names the scripted tools somewhere`, async () => {
      const requests = await readOtlpFile(DIR + file);
      if (requests instanceof Error) throw requests;
      const traces = requests.flatMap((r) => (r.signal === 'traces' ? [r.request] : []));
      const spans = traces.flatMap((r) => r.spans);
      expect(traces.flatMap((r) => r.rejected)).toEqual([]);
      expect(spans.length).toBeGreaterThan(0);
      let text = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events.map((e) => e.attributes)]));
      // Where the content went to log records only (openai-v2), the logs capture holds the calls.
      const logs = DIR + file.replace('.traces.', '.logs.');
      if (existsSync(logs)) text += gunzipSync(await readFile(logs)).toString('latin1');
      expect(text).toContain('get_weather');
      expect(text).toContain('lookup_order');
    });
  }
});
