import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SpanWal } from '../../src/ingest/wal/span-wal.ts';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { collect } from '../helpers/collect.ts';

/**
 * An SDK that thinks an export timed out sends it again, often after its trajectory closed.
 * The duplicate is recognized and released: it never holds a trajectory open, nor the write-
 * ahead log (whose release would otherwise stop there until it fills and `serve` answers 503).
 */

const TRACE = '5bf92f3577b34da6a3ce929d0e0e4736';
const body = JSON.stringify({
  resourceSpans: [
    {
      resource: { attributes: [] },
      scopeSpans: [
        {
          spans: [
            {
              traceId: TRACE,
              spanId: '00f067aa0ba902b7',
              name: 'invoke_agent a',
              startTimeUnixNano: '1000',
              endTimeUnixNano: '2000',
              attributes: [{ key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } }],
            },
          ],
        },
      ],
    },
  ],
});

function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('serve: a late exact duplicate export', () => {
  it('is deduplicated, leaves no trajectory open and releases the write-ahead log', async () => {
    const serve = await startServe({ assembler: { quietPeriodMs: 100 } });
    const post = () => fetch(`${serve.url}/v1/traces`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    try {
      expect((await post()).status).toBe(200);
      await waitForLines(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.length === 1);
      expect((await post()).status).toBe(200);
      let metrics = '';
      const deadline = Date.now() + 5_000;
      do {
        await new Promise((r) => setTimeout(r, 100));
        metrics = await (await fetch(`${serve.url}/metrics`)).text();
      } while (Date.now() < deadline && !(sample(metrics, 'trajwatch_spans_deduplicated') === 1 && sample(metrics, 'trajwatch_trajectories_open') === 0));
      expect(sample(metrics, 'trajwatch_spans_deduplicated')).toBe(1);
      expect(sample(metrics, 'trajwatch_trajectories_open')).toBe(0);
      // No second revision: the duplicate added nothing.
      expect(await waitForLines(join(serve.dataDir, 'trajectories.jsonl'), () => true)).toHaveLength(1);
      // The log is released on a 500 ms timer; a SIGKILL then leaves nothing to replay.
      await new Promise((r) => setTimeout(r, 1_500));
      serve.child.kill('SIGKILL');
      await new Promise((r) => serve.child.once('exit', r));
    } finally {
      await serve.stop();
    }
    const { wal, records } = await SpanWal.open(join(serve.dataDir, 'wal'), { maxBytes: 1 << 30, segmentBytes: 1 << 24 });
    await wal.close();
    expect(await collect(records)).toEqual([]);
  }, 30_000);
});

describe('serve: a late span after a refused one', () => {
  it('opens revision 2, which still says refused-spans (the refused span stays lost)', async () => {
    const serve = await startServe({ assembler: { quietPeriodMs: 100 } });
    const post = (text: string) => fetch(`${serve.url}/v1/traces`, { method: 'POST', body: text, headers: { 'content-type': 'application/json' } });
    const parsed = JSON.parse(body) as { resourceSpans: [{ scopeSpans: [{ spans: Record<string, unknown>[] }] }] };
    const rootSpan = parsed.resourceSpans[0].scopeSpans[0].spans[0]!;
    const withSpans = (spans: Record<string, unknown>[]) => JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans }] }] });
    try {
      // The all-zero span id is refused (counted); the root is taken.
      expect((await post(withSpans([rootSpan, { ...rootSpan, spanId: '0000000000000000', parentSpanId: rootSpan['spanId'] }]))).status).toBe(200);
      await waitForLines(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.length === 1);
      expect((await post(withSpans([{ ...rootSpan, spanId: '00f067aa0ba902c8', parentSpanId: rootSpan['spanId'] }]))).status).toBe(200);
      const rows = await waitForLines<{ revision: number; complete: boolean; incompleteReasons: string[]; refusedSpans?: number; steps: unknown[] }>(
        join(serve.dataDir, 'trajectories.jsonl'),
        (r) => r.length === 2,
      );
      expect(rows.map((t) => [t.revision, t.complete, t.incompleteReasons, t.refusedSpans, t.steps.length])).toEqual([
        [1, false, ['refused-spans'], 1, 1],
        [2, false, ['refused-spans'], 1, 2],
      ]);
    } finally {
      await serve.stop();
    }
  }, 30_000);
});
