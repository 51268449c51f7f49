import { join } from 'node:path';
import { postJson } from '../../../../test/reliability/agent-run.ts';
import { count, drained } from '../accounting.ts';
import type { Probe } from '../probe.ts';
import { readJsonLines, startCampaignServe } from '../serve-process.ts';

const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
const T0 = 1_760_000_000_000_000_000n;
const at = (ms: number) => String(T0 + BigInt(ms) * 1_000_000n);
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

/**
 * An approval served by a host whose clock is `aheadMs` ahead of the agent's: really before
 * the send, stamped after it. The approver's span sits under the agent's client span.
 */
function skewedRun(traceId: string, aheadMs: number) {
  const id = (n: number) => `${traceId.slice(0, 14)}${n.toString(16).padStart(2, '0')}`;
  const resource = (service: string, host: string) => ({ attributes: [attr('service.name', service), attr('host.name', host)] });
  return {
    resourceSpans: [
      {
        resource: resource('mailer', 'host-a'),
        scopeSpans: [
          {
            scope: { name: 'agent' },
            spans: [
              {
                traceId,
                spanId: id(1),
                name: 'invoke_agent mailer',
                kind: 1,
                startTimeUnixNano: at(0),
                endTimeUnixNano: at(20_000),
                attributes: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'mailer')],
              },
              {
                traceId,
                spanId: id(2),
                parentSpanId: id(1),
                name: 'POST /approve',
                kind: 3,
                startTimeUnixNano: at(2_500),
                endTimeUnixNano: at(3_000),
                attributes: [],
              },
              tool(traceId, id(4), id(1), 'send_email', 4_000, 5_000),
            ],
          },
        ],
      },
      {
        resource: resource('approver', 'host-b'),
        scopeSpans: [{ scope: { name: 'approver' }, spans: [tool(traceId, id(3), id(2), 'approve_send', 2_600 + aheadMs, 2_900 + aheadMs)] }],
      },
    ],
  };
}

/** Clock skew from 0.5 s to 10 min between two hosts: never a finding about order. */
export const time: Probe = async () => {
  const serve = await startCampaignServe();
  const offsets = [500, 2_000, 5_000, 60_000, 600_000];
  try {
    const ids = offsets.map((ms, i) => `71e${i}`.padEnd(32, '0'));
    for (const [i, ms] of offsets.entries()) await postJson(serve.url, skewedRun(ids[i]!, ms));
    await drained(serve);
    const trajectories = readJsonLines<{ key: string; captureGaps?: { reason: string; skewNs?: string }[] }>(join(serve.dataDir, 'trajectories.jsonl')).filter(
      (t) => ids.includes(t.key),
    );
    const findings = readJsonLines<{ area?: string; record_kind?: string; subject?: { trajectory_key?: string } }>(join(serve.dataDir, 'findings.jsonl'));
    const orderFindings = findings.filter((f) => (f.area === 'unguarded-send' || f.area === 'out-of-order-gate') && JSON.stringify(f).match(/71e\d/) !== null);
    const skewed = trajectories.filter((t) => t.captureGaps?.some((g) => g.reason === 'clock-skew') === true);
    const exit = await serve.stop();
    return {
      name: 'time',
      setup: `one agent run per offset (${offsets.map((o) => `${o / 1000} s`).join(', ')}): an approval served by a host whose clock is that far ahead, stamped after the send it gated`,
      rows: [
        ['runs with a `clock-skew` capture gap', `${count(skewed.length)} / ${count(offsets.length)}`],
        ['skews recorded (ns)', skewed.map((t) => t.captureGaps!.find((g) => g.reason === 'clock-skew')!.skewNs).join(', ')],
        ['`unguarded-send` / `out-of-order-gate` findings over them', count(orderFindings.length)],
        ['SIGTERM', `exit ${exit.code}`],
      ],
      checks: [
        { what: 'every skewed run records clock-skew', ok: skewed.length === offsets.length },
        { what: 'no order finding rests on a skewed clock', ok: orderFindings.length === 0 },
        { what: 'SIGTERM exits 0', ok: exit.code === 0 },
      ],
    };
  } finally {
    await serve.stop();
  }
};
