/**
 * A small GenAI-convention agent run as an OTLP/JSON request, with fixed timestamps so the same
 * run sent twice (or to a restarted serve) is byte-identical: an agent root, an llm call whose
 * input carries `userText`, a tool call returning `toolResult`, and a tool call failing with
 * `toolError`.
 */
export interface AgentRun {
  traceId: string;
  userText?: string;
  toolArgs?: string;
  toolResult?: string;
  toolError?: string;
}

const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
const T0 = 1_760_000_000_000_000_000n;
const at = (ms: number) => String(T0 + BigInt(ms) * 1_000_000n);

export function agentRunRequest(run: AgentRun): { resourceSpans: unknown[] } {
  const spanId = (n: number) => `${run.traceId.slice(0, 14)}${n.toString(16).padStart(2, '0')}`;
  const root = spanId(1);
  const spans = [
    {
      traceId: run.traceId,
      spanId: root,
      name: 'invoke_agent planner',
      kind: 1,
      startTimeUnixNano: at(0),
      endTimeUnixNano: at(100),
      attributes: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'planner')],
    },
    {
      traceId: run.traceId,
      spanId: spanId(2),
      parentSpanId: root,
      name: 'chat m',
      kind: 3,
      startTimeUnixNano: at(10),
      endTimeUnixNano: at(20),
      attributes: [
        attr('gen_ai.operation.name', 'chat'),
        attr('gen_ai.request.model', 'm'),
        attr('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: run.userText ?? 'Look up the weather.' }] }])),
      ],
    },
    {
      traceId: run.traceId,
      spanId: spanId(3),
      parentSpanId: root,
      name: 'execute_tool http_get',
      kind: 1,
      startTimeUnixNano: at(30),
      endTimeUnixNano: at(40),
      attributes: [
        attr('gen_ai.operation.name', 'execute_tool'),
        attr('gen_ai.tool.name', 'http_get'),
        attr('gen_ai.tool.call.arguments', run.toolArgs ?? '{"url":"https://example.com/weather"}'),
        attr('gen_ai.tool.call.result', run.toolResult ?? '{"temp":21}'),
      ],
    },
    {
      traceId: run.traceId,
      spanId: spanId(4),
      parentSpanId: root,
      name: 'execute_tool deploy',
      kind: 1,
      startTimeUnixNano: at(50),
      endTimeUnixNano: at(60),
      attributes: [attr('gen_ai.operation.name', 'execute_tool'), attr('gen_ai.tool.name', 'deploy'), attr('gen_ai.tool.call.arguments', '{}')],
      status: { code: 2, message: run.toolError ?? 'deploy failed: timeout' },
    },
  ];
  return {
    resourceSpans: [{ resource: { attributes: [attr('service.name', 'reliability-agent')] }, scopeSpans: [{ scope: { name: 'agent' }, spans }] }],
  };
}

/** POSTs an OTLP/JSON request and returns the status and body text. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** The value of a Prometheus sample (sum over label sets that contain every `labels` pair). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_:]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const set = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}
