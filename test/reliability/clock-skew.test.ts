import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from './agent-run.ts';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';

/**
 * Clock skew between emitters, through a real `serve`: timestamps that contradict the span
 * tree must never become findings about order, and the capture must say it is skewed.
 */

const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
const T0 = 1_760_000_000_000_000_000n;
const at = (ms: number) => String(T0 + BigInt(ms) * 1_000_000n);
const resource = (service: string, host: string) => ({ attributes: [attr('service.name', service), attr('host.name', host)] });
const tool = (traceId: string, spanId: string, parentSpanId: string, name: string, startMs: number, endMs: number) => ({
  traceId,
  spanId,
  parentSpanId,
  name: `execute_tool ${name}`,
  kind: 1,
  startTimeUnixNano: at(startMs),
  endTimeUnixNano: at(endMs),
  attributes: [
    attr('gen_ai.operation.name', 'execute_tool'),
    attr('gen_ai.tool.name', name),
    attr('gen_ai.tool.call.arguments', '{"to":"ops@example.com"}'),
    attr('gen_ai.tool.call.result', 'ok'),
  ],
});
const root = (traceId: string, spanId: string, startMs: number, endMs: number) => ({
  traceId,
  spanId,
  name: 'invoke_agent mailer',
  kind: 1,
  startTimeUnixNano: at(startMs),
  endTimeUnixNano: at(endMs),
  attributes: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'mailer')],
});

/**
 * An approval that really ran before the send, served by a host whose clock is 5 s ahead: the
 * agent's client span to the approver (2.5–3.0 s on the agent's clock) holds the approver's
 * server-side gate span, stamped 7.5–7.9 s, after the send at 4–5 s.
 */
function aheadGate(traceId: string) {
  const id = (n: number) => `${traceId.slice(0, 14)}${n.toString(16).padStart(2, '0')}`;
  return {
    resourceSpans: [
      {
        resource: resource('mailer', 'host-a'),
        scopeSpans: [
          {
            scope: { name: 'agent' },
            spans: [
              root(traceId, id(1), 0, 10_000),
              {
                traceId,
                spanId: id(2),
                parentSpanId: id(1),
                name: 'POST /approve',
                kind: 3,
                startTimeUnixNano: at(2_500),
                endTimeUnixNano: at(3_000),
                attributes: [attr('http.request.method', 'POST')],
              },
              tool(traceId, id(4), id(1), 'send_email', 4_000, 5_000),
            ],
          },
        ],
      },
      {
        resource: resource('approver', 'host-b'),
        scopeSpans: [{ scope: { name: 'approver' }, spans: [tool(traceId, id(3), id(2), 'approve_send', 7_500, 7_900)] }],
      },
    ],
  };
}

/** A tool span that starts three hours before the run that holds it, from the same service. */
function childBeforeParent(traceId: string) {
  const id = (n: number) => `${traceId.slice(0, 14)}${n.toString(16).padStart(2, '0')}`;
  const hours3 = 3 * 3600 * 1000;
  return {
    resourceSpans: [
      {
        resource: resource('mailer', 'host-a'),
        scopeSpans: [
          {
            scope: { name: 'agent' },
            spans: [
              root(traceId, id(1), hours3, hours3 + 10_000),
              tool(traceId, id(2), id(1), 'approve_send', 1_000, 1_500),
              tool(traceId, id(3), id(1), 'send_email', hours3 + 2_000, hours3 + 3_000),
            ],
          },
        ],
      },
    ],
  };
}

interface ManifestRow {
  record_kind: string;
  subject: { trajectory_key: string };
  checks: { check: string; status: string; reason?: string }[];
}

describe('clock skew through serve', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe();
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it('a gate stamped by a host 5 s ahead is neither a missing gate nor a late one; the capture records the skew', async () => {
    const traceId = '5a'.repeat(16);
    expect((await postJson(serve.url, aheadGate(traceId))).status).toBe(200);
    const trajectories = await waitForLines<Record<string, unknown>>(join(serve.dataDir, 'trajectories.jsonl'), (rows) => rows.some((r) => r.key === traceId));
    const t = trajectories.find((r) => r.key === traceId)!;
    const gaps = (t.captureGaps ?? []) as { reason: string; spanIds: string[]; skewNs?: string }[];
    const skew = gaps.find((g) => g.reason === 'clock-skew');
    expect(skew, JSON.stringify(t.captureGaps)).toBeDefined();
    expect(skew!.spanIds).toEqual([`${traceId.slice(0, 14)}03`]);
    // Ahead by 4.9 s at least: it is put back to end with its parent (3.0 s).
    expect(BigInt(skew!.skewNs!)).toBe(4_900_000_000n);
    // The tree orders the gate (under the 2.5 s client span) before the send.
    const order = (t.steps as { name: string }[]).map((s) => s.name);
    expect(order.indexOf('execute_tool approve_send')).toBeLessThan(order.indexOf('execute_tool send_email'));

    const findings = await waitForLines<{ area: string; subject?: unknown }>(join(serve.dataDir, 'findings.jsonl'), (rows) =>
      rows.some((r) => r.subject !== undefined && JSON.stringify(r).includes(traceId) && (r as { record_kind?: string }).record_kind === 'analysis-manifest'),
    );
    const mine = findings.filter((f) => JSON.stringify(f).includes(traceId));
    expect(mine.map((f) => f.area).filter((a) => a === 'unguarded-send' || a === 'out-of-order-gate')).toEqual([]);
    const manifest = mine.find((f) => (f as unknown as ManifestRow).record_kind === 'analysis-manifest') as unknown as ManifestRow;
    for (const check of ['unguarded-send', 'out-of-order-gate']) {
      const status = manifest.checks.find((c) => c.check === check)!;
      expect(status, check).toMatchObject({ status: 'unavailable', reason: 'clock-skew' });
    }
  });

  it('a child three hours before its parent is flagged as clock skew, and no ordering claim is made over it', async () => {
    const traceId = '3b'.repeat(16);
    expect((await postJson(serve.url, childBeforeParent(traceId))).status).toBe(200);
    const trajectories = await waitForLines<Record<string, unknown>>(join(serve.dataDir, 'trajectories.jsonl'), (rows) => rows.some((r) => r.key === traceId));
    const t = trajectories.find((r) => r.key === traceId)!;
    const skew = ((t.captureGaps ?? []) as { reason: string; spanIds: string[]; skewNs?: string }[]).find((g) => g.reason === 'clock-skew');
    expect(skew, JSON.stringify(t)).toBeDefined();
    expect(skew!.spanIds).toEqual([`${traceId.slice(0, 14)}02`]);
    expect(BigInt(skew!.skewNs!)).toBe(BigInt(3 * 3600 * 1000 - 1_000) * 1_000_000n);
    // By the tree, the run starts first.
    expect((t.steps as { name: string }[])[0]!.name).toBe('invoke_agent mailer');
    const findings = await waitForLines<Record<string, unknown>>(join(serve.dataDir, 'findings.jsonl'), (rows) =>
      rows.some((r) => r.record_kind === 'analysis-manifest' && JSON.stringify(r).includes(traceId)),
    );
    const manifest = findings.find((r) => r.record_kind === 'analysis-manifest' && JSON.stringify(r).includes(traceId)) as unknown as ManifestRow;
    for (const check of ['unguarded-send', 'out-of-order-gate']) {
      expect(
        manifest.checks.find((c) => c.check === check),
        check,
      ).toMatchObject({ status: 'unavailable', reason: 'clock-skew' });
    }
  });
});
