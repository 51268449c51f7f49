/**
 * Multi-turn conversations as the Collector's Kafka exporter writes them: one trace per user
 * turn (GenAI conventions, `gen_ai.conversation.id` on every span), each trace its own record
 * keyed by trace id, so a conversation's traces land on several partitions. Every turn looks
 * the order up again with the same arguments (a repetition only the whole session shows) and
 * the second turn's refund fails (an error output).
 */
import { createHash } from 'node:crypto';
import { encodeSpans, type OtlpRecord } from '../helpers/otlp-records.ts';

const hex = (seed: string, bytes: number): string =>
  createHash('sha256')
    .update(seed)
    .digest('hex')
    .slice(0, bytes * 2);
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** Sessions are an hour apart in event time; turns 300 ms apart within one (a replay sees one session per hour). */
const SESSION_GAP_NS = 3_600_000_000_000n;
const TURN_GAP_MS = 300;

export interface Conversation {
  sessionId: string;
  traceIds: string[];
  /** One OTLP/JSON request per turn (the replay input) and its record (the Kafka input). */
  requests: unknown[];
  records: OtlpRecord[];
}

/** Conversation `index` of `prefix` with `turns` traces. */
export function conversation(prefix: string, index: number, turns: number): Conversation {
  const sessionId = `conv-${prefix}-${index}`;
  const base = 1_700_000_000_000_000_000n + BigInt(index) * SESSION_GAP_NS;
  const out: Conversation = { sessionId, traceIds: [], requests: [], records: [] };
  for (let turn = 0; turn < turns; turn++) {
    const traceId = hex(`${sessionId}-trace-${turn}`, 16);
    const rootId = hex(`${sessionId}-root-${turn}`, 8);
    const t0 = base + BigInt(turn * TURN_GAP_MS) * 1_000_000n;
    const at = (ms: number) => String(t0 + BigInt(ms) * 1_000_000n);
    const session = str('gen_ai.conversation.id', sessionId);
    const tool = (n: number, name: string, args: string, failed: boolean) => ({
      traceId,
      spanId: hex(`${sessionId}-tool-${turn}-${n}`, 8),
      parentSpanId: rootId,
      name: `execute_tool ${name}`,
      kind: 1,
      startTimeUnixNano: at(10 + n * 10),
      endTimeUnixNano: at(15 + n * 10),
      status: failed ? { code: 2, message: `${name} failed: upstream timeout` } : { code: 1 },
      attributes: [
        str('gen_ai.operation.name', 'execute_tool'),
        str('gen_ai.tool.name', name),
        str('gen_ai.tool.call.id', `call-${sessionId}-${turn}-${n}`),
        str('gen_ai.tool.call.arguments', args),
        session,
      ],
    });
    const spans = [
      tool(1, 'lookup_order', `{"order":"${sessionId}"}`, false),
      ...(turn === 1 ? [tool(2, 'refund', `{"order":"${sessionId}","amount":10}`, true)] : [tool(2, 'send_reply', `{"turn":${turn}}`, false)]),
      {
        traceId,
        spanId: rootId,
        name: 'invoke_agent support',
        kind: 1,
        startTimeUnixNano: at(0),
        endTimeUnixNano: at(100),
        status: { code: 1 },
        attributes: [str('gen_ai.operation.name', 'invoke_agent'), str('gen_ai.agent.name', 'support'), session],
      },
    ];
    out.traceIds.push(traceId);
    out.requests.push(otlpRequest(spans));
    out.records.push({ key: traceId, value: encodeSpans(spans), traceIds: [traceId] });
  }
  return out;
}

/** `count` conversations of 3 to 6 turns each (deterministic). */
export function conversations(prefix: string, count: number, first = 0): Conversation[] {
  return Array.from({ length: count }, (_, i) => conversation(prefix, first + i, 3 + ((first + i) % 4)));
}

function otlpRequest(spans: unknown[]): unknown {
  return {
    resourceSpans: [{ resource: { attributes: [str('service.name', 'support-agent')] }, scopeSpans: [{ scope: { name: 'trajwatch-test' }, spans }] }],
  };
}
