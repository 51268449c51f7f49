import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';
import { join } from 'node:path';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

function request(spans: unknown[]) {
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans }] }] });
}

function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.split(' ').at(-1));
  }
  return undefined;
}

describe('/metrics on a running serve', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe();
  });
  afterAll(async () => {
    await serve.stop();
  });

  it('counts requests, spans, refusals and closed trajectories by their labels', async () => {
    const post = (body: string, type = 'application/json') => fetch(`${serve.url}/v1/traces`, { method: 'POST', body, headers: { 'content-type': type } });
    const tool = {
      traceId: TRACE,
      spanId: '00f067aa0ba902b7',
      name: 'execute_tool lookup',
      startTimeUnixNano: '1000',
      endTimeUnixNano: '2000',
      status: { code: 2, message: 'boom' },
      attributes: [
        { key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } },
        { key: 'gen_ai.tool.name', value: { stringValue: 'lookup' } },
      ],
    };
    expect((await post(request([tool, { ...tool, spanId: '0000000000000000' }]))).status).toBe(200);
    expect((await post('garbage')).status).toBe(400);
    expect((await post('x', 'text/plain')).status).toBe(415);
    await waitForLines(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.length === 1);

    // The durable-time histogram is observed once the findings' fsync resolved, which can be a
    // moment after the trajectory line is on disk: scrape until it is there (bounded).
    let text = '';
    for (const deadline = Date.now() + 10_000; ; ) {
      const res = await fetch(`${serve.url}/metrics`);
      expect(res.status).toBe(200);
      text = await res.text();
      if (/trajwatch_finding_durable_seconds_count\{[^}]*sink="local-log"/.test(text) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(sample(text, 'trajwatch_spans_received_total', { transport: 'http', content_type: 'application/json' })).toBe(1);
    expect(sample(text, 'trajwatch_spans_refused_total', { transport: 'http' })).toBe(1);
    expect(sample(text, 'trajwatch_otlp_requests_total', { status: '200' })).toBe(1);
    expect(sample(text, 'trajwatch_otlp_requests_total', { status: '400' })).toBe(1);
    expect(sample(text, 'trajwatch_otlp_requests_refused_total', { reason: 'content-type' })).toBe(1);
    expect(sample(text, 'trajwatch_trajectories_closed_total', { completeness: 'incomplete' })).toBe(1);
    expect(sample(text, 'trajwatch_trajectory_incomplete_reasons_total', { reason: 'refused-spans' })).toBe(1);
    // the tool span carries no arguments: a capture gap, counted by reason (it failed, so its missing result is not one)
    expect(sample(text, 'trajwatch_trajectory_capture_gaps_total', { reason: 'tool-args-not-captured' })).toBe(1);
    expect(text).not.toMatch(/trajwatch_trajectory_capture_gaps_total\{reason="tool-result-not-captured"\}/);
    expect(sample(text, 'trajwatch_l0_hits_total', { pattern: 'error-output' })).toBe(1);
    expect(sample(text, 'trajwatch_findings_total', { analyst: 'l0' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'trajwatch_trajectories_open')).toBe(0);
    expect(sample(text, 'trajwatch_finding_durable_seconds_count', { sink: 'local-log' })).toBe(1);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});
