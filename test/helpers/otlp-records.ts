/**
 * Agent runs as OTLP records shaped like the OTel Collector's Kafka exporter writes them
 * (`otlp_proto`, `partition_traces_by_id: true`): an ExportTraceServiceRequest per record,
 * keyed by trace id (hex), encoded with protobufjs from the real opentelemetry-proto schema
 * (independent of trajwatch's decoder). A trace can be split over several records, and one
 * record can hold several whole traces.
 */
import { createHash } from 'node:crypto';
import { encodeOtlpJsonAsProto } from '../fixtures/otlp/protobufjs-codec.ts';

export interface OtlpRecord {
  /** The trace id of the record's first trace (what the Collector keys by). */
  key: string;
  value: Buffer;
  traceIds: string[];
}

const hex = (seed: string, bytes: number): string =>
  createHash('sha256')
    .update(seed)
    .digest('hex')
    .slice(0, bytes * 2);

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

/**
 * One agent run (GenAI conventions): an `invoke_agent` root, the same tool called twice with
 * the same arguments (a repetition group) and one tool call failing (an error-output hit).
 * Children come first and the root last, as an SDK's batch exporter sends them.
 */
export function agentRunSpans(runId: string, options: { sessionId?: string } = {}): { traceId: string; spans: unknown[] } {
  const traceId = hex(`trace-${runId}`, 16);
  const rootId = hex(`root-${runId}`, 8);
  const t0 = 1_700_000_000_000_000_000n + BigInt(Number.parseInt(hex(runId, 3), 16)) * 1_000_000_000n;
  const at = (ms: number) => String(t0 + BigInt(ms) * 1_000_000n);
  const session = options.sessionId === undefined ? [] : [str('gen_ai.conversation.id', options.sessionId)];
  const tool = (n: number, name: string, args: string, failed: boolean) => ({
    traceId,
    spanId: hex(`tool-${runId}-${n}`, 8),
    parentSpanId: rootId,
    name: `execute_tool ${name}`,
    kind: 1,
    startTimeUnixNano: at(10 + n * 10),
    endTimeUnixNano: at(15 + n * 10),
    status: failed ? { code: 2, message: `${name} failed: upstream timeout` } : { code: 1 },
    attributes: [
      str('gen_ai.operation.name', 'execute_tool'),
      str('gen_ai.tool.name', name),
      str('gen_ai.tool.call.id', `call-${runId}-${n}`),
      str('gen_ai.tool.call.arguments', args),
      ...session,
    ],
  });
  const spans = [
    tool(1, 'lookup_order', `{"order":"${runId}"}`, false),
    tool(2, 'lookup_order', `{"order":"${runId}"}`, false),
    tool(3, 'refund', `{"order":"${runId}","amount":10}`, true),
    {
      traceId,
      spanId: rootId,
      name: 'invoke_agent support',
      kind: 1,
      startTimeUnixNano: at(0),
      endTimeUnixNano: at(100),
      status: { code: 1 },
      attributes: [str('gen_ai.operation.name', 'invoke_agent'), str('gen_ai.agent.name', 'support'), ...session],
    },
  ];
  return { traceId, spans };
}

/** One ExportTraceServiceRequest holding `spans` (OTLP/JSON shape), as protobuf bytes. */
export function encodeSpans(spans: unknown[]): Buffer {
  const request = {
    resourceSpans: [
      {
        resource: { attributes: [str('service.name', 'support-agent')] },
        scopeSpans: [{ scope: { name: 'trajwatch-test' }, spans }],
      },
    ],
  };
  return Buffer.from(encodeOtlpJsonAsProto(request));
}

/**
 * Records for `runs` agent runs: every third run's trace goes over three records (two children,
 * then one child and the root), every third shares one record with the next run (two whole
 * traces in one record), the rest are one record each.
 */
export function collectorRecords(runIds: readonly string[], options: { sessionEvery?: number } = {}): OtlpRecord[] {
  const records: OtlpRecord[] = [];
  for (let i = 0; i < runIds.length; i++) {
    const sessionId = options.sessionEvery !== undefined && i % options.sessionEvery === 0 ? `session-${runIds[i]}` : undefined;
    const run = agentRunSpans(runIds[i]!, sessionId === undefined ? {} : { sessionId });
    if (i % 3 === 0) {
      records.push({ key: run.traceId, value: encodeSpans(run.spans.slice(0, 2)), traceIds: [run.traceId] });
      records.push({ key: run.traceId, value: encodeSpans(run.spans.slice(2)), traceIds: [run.traceId] });
    } else if (i % 3 === 1 && i + 1 < runIds.length) {
      const next = agentRunSpans(runIds[i + 1]!);
      records.push({ key: run.traceId, value: encodeSpans([...run.spans, ...next.spans]), traceIds: [run.traceId, next.traceId] });
      i++;
    } else {
      records.push({ key: run.traceId, value: encodeSpans(run.spans), traceIds: [run.traceId] });
    }
  }
  return records;
}
