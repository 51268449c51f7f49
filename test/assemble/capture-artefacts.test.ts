/**
 * Capture artefacts that are not the agent's: a tool span that records its framework's
 * wrapper around the arguments, or the arguments in a non-JSON form (a Python repr), while the
 * LLM request it answers carries the call as JSON. Spans are real-shaped (the OpenLLMetry
 * LangChain capture of the framework matrix, test/frameworks/) and read by the real normalizer;
 * nothing here is a stand-in.
 */
import { describe, expect, it } from 'vitest';
import { linkRequests } from '../../src/assemble/link-requests.ts';
import { trajectoryToJson } from '../../src/assemble/trajectory-json.ts';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { malformedStructure } from '../../src/checks/malformed-structure.ts';
import { toolRepetition } from '../../src/checks/tool-repetition.ts';
import type { Attributes } from '../../src/ingest/span.ts';
import { jsonDigest } from '../../src/normalize/args-digest.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import type { Step } from '../../src/normalize/step.ts';
import { makeTrajectory } from '../helpers/steps.ts';
import { makeSpan } from '../normalize/make-span.ts';

let next = 0;
function read(at: number, attributes: Attributes, name = 'span'): Step {
  next++;
  return normalizeSpan(
    makeSpan({
      spanId: next.toString(16).padStart(16, '0'),
      parentSpanId: '00f067aa0ba902b7',
      name,
      startTimeUnixNano: BigInt(at) * 1_000_000_000n,
      endTimeUnixNano: BigInt(at) * 1_000_000_000n + 500_000_000n,
      attributes,
    }),
  );
}

const TOOLS = JSON.stringify([
  { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  { name: 'lookup_order', parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } },
]);

/** A GenAI chat span (OpenLLMetry LangChain) whose output asks for one call. */
function chat(at: number, id: string | undefined, name: string, args: Record<string, unknown>): Step {
  const part: Record<string, unknown> = { type: 'tool_call', name, arguments: args };
  if (id !== undefined) part['id'] = id;
  return read(
    at,
    {
      'gen_ai.operation.name': 'chat',
      'gen_ai.tool.definitions': TOOLS,
      'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [part], finish_reason: 'tool_call' }]),
    },
    'ChatOpenAI.chat',
  );
}

/** OpenLLMetry LangChain's tool span: the callback envelope as `gen_ai.tool.call.arguments`. */
function envelopeTool(at: number, name: string, args: Record<string, unknown>, callId: string, tagsAndMetadata = true): Step {
  const envelope = JSON.stringify({
    input_str: pyRepr(args),
    tags: tagsAndMetadata ? ['seq:step:1'] : null,
    metadata: tagsAndMetadata ? { thread_id: 's1', langgraph_step: at } : null,
    inputs: args,
    kwargs: { color: 'green', name: null, tool_call_id: callId },
  });
  return read(
    at,
    {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'traceloop.span.kind': 'tool',
      'traceloop.entity.input': envelope,
      'gen_ai.tool.call.arguments': envelope,
      'gen_ai.tool.call.result': 'ok',
    },
    `execute_tool ${name}`,
  );
}

function genaiTool(at: number, name: string, argsText: string, callId?: string): Step {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
    'gen_ai.tool.call.arguments': argsText,
    'gen_ai.tool.call.result': 'ok',
  };
  if (callId !== undefined) attributes['gen_ai.tool.call.id'] = callId;
  return read(at, attributes, `execute_tool ${name}`);
}

const pyRepr = (args: Record<string, unknown>) =>
  `{${Object.entries(args)
    .map(([k, v]) => `'${k}': '${String(v)}'`)
    .join(', ')}}`;
const malformed = (steps: Step[]) => malformedStructure(makeTrajectory(steps), defaultChecksConfig);

/** The matrix scenario's first turn: get_weather(Paris) twice, then lookup_order(42). */
function envelopeRun(tagsAndMetadata: boolean): Step[] {
  return [
    chat(1, 'call_paris_1', 'get_weather', { city: 'Paris' }),
    envelopeTool(2, 'get_weather', { city: 'Paris' }, 'call_paris_1', tagsAndMetadata),
    chat(3, 'call_paris_2', 'get_weather', { city: 'Paris' }),
    envelopeTool(4, 'get_weather', { city: 'Paris' }, 'call_paris_2', tagsAndMetadata),
    chat(5, 'call_order_42', 'lookup_order', { order_id: '42' }),
    envelopeTool(6, 'lookup_order', { order_id: '42' }, 'call_order_42', tagsAndMetadata),
  ];
}

describe('a wrapped recorded call, confirmed by the request it answers', () => {
  for (const tagsAndMetadata of [true, false]) {
    it(`OpenLLMetry LangChain envelope (tags and metadata ${tagsAndMetadata ? 'set' : 'null'}): the inner arguments, the raw kept, one digest across per-call ids, no malformed-structure`, () => {
      const steps = envelopeRun(tagsAndMetadata);
      const linked = linkRequests(steps);
      const tools = linked.filter((s) => s.kind === 'tool');
      expect(tools.map((s) => s.args?.parsed)).toEqual([{ city: 'Paris' }, { city: 'Paris' }, { order_id: '42' }]);
      expect(tools.map((s) => s.args?.digest)).toEqual([jsonDigest({ city: 'Paris' }), jsonDigest({ city: 'Paris' }), jsonDigest({ order_id: '42' })]);
      expect(tools.map((s) => s.args?.raw)).toEqual(steps.filter((s) => s.kind === 'tool').map((s) => s.args?.raw));
      expect(tools.map((s) => [s.args?.recorded, s.args?.wrappedAt, s.args?.source])).toEqual([
        ['wrapped', 'inputs', undefined],
        ['wrapped', 'inputs', undefined],
        ['wrapped', 'inputs', undefined],
      ]);
      expect(malformed(linked)).toEqual([]);
      const obs = toolRepetition(makeTrajectory(linked));
      expect(obs).toMatchObject({ status: 'observed', groups: [{ toolName: 'get_weather', argsDigest: jsonDigest({ city: 'Paris' }), count: 2 }] });
      const line = (trajectoryToJson(makeTrajectory(linked))['steps'] as Record<string, unknown>[])[1]!;
      expect(line['args']).toMatchObject({ parsed: { city: 'Paris' }, recorded: 'wrapped', wrappedAt: 'inputs' });
    });
  }

  it('an envelope holding the call only as str(args) under input_str, beside a per-call id: read from that text, one digest, no malformed-structure', () => {
    // On main this was a false `missing required property "city"` on both calls (the
    // envelope's `kwargs` read as the call) and no repetition (the tool_call_id split them).
    const env = (id: string) => `{"input_str":"{'city': 'Paris'}","tags":null,"metadata":null,"kwargs":{"color":"green","tool_call_id":"${id}"}}`;
    const steps = [
      chat(1, 'c1', 'get_weather', { city: 'Paris' }),
      genaiTool(2, 'get_weather', env('c1')),
      chat(3, 'c2', 'get_weather', { city: 'Paris' }),
      genaiTool(4, 'get_weather', env('c2')),
    ];
    expect(malformed(steps).length).toBe(2);
    const linked = linkRequests(steps);
    expect(linked[1]!.args).toMatchObject({
      parsed: { city: 'Paris' },
      recorded: 'wrapped',
      wrappedAt: 'input_str',
      capturedAs: 'python-literal',
      raw: env('c1'),
    });
    expect(malformed(linked)).toEqual([]);
    expect(toolRepetition(makeTrajectory(linked))).toMatchObject({ status: 'observed', groups: [{ count: 2, argsDigest: jsonDigest({ city: 'Paris' }) }] });
  });

  it('a JS wrapper recording (input, options): {"input": {...}, "options": null} is read as its input', () => {
    const steps = [chat(1, 'c1', 'get_weather', { city: 'Paris' }), genaiTool(2, 'get_weather', '{"input":{"city":"Paris"},"options":null}', 'c1')];
    const linked = linkRequests(steps);
    expect(linked[1]!.args).toMatchObject({
      parsed: { city: 'Paris' },
      recorded: 'wrapped',
      wrappedAt: 'input',
      raw: '{"input":{"city":"Paris"},"options":null}',
    });
    expect(malformed(linked)).toEqual([]);
  });

  it('unwraps nothing the request does not confirm: a different inner value stays as captured, and is validated', () => {
    const steps = [chat(1, 'c1', 'get_weather', { city: 'Paris' }), genaiTool(2, 'get_weather', '{"input":{"city":"Lyon"},"options":null}', 'c1')];
    const linked = linkRequests(steps);
    expect(linked[1]!.args?.parsed).toEqual({ input: { city: 'Lyon' }, options: null });
    expect(linked[1]!.args?.recorded).toBeUndefined();
    expect(malformed(linked).map((h) => h.anchor)).toEqual([linked[1]!.id]);
  });

  it('an agent that itself asked for the wrapper keeps it: the request equals the capture', () => {
    const steps = [chat(1, 'c1', 'get_weather', { input: { city: 'Paris' } }), genaiTool(2, 'get_weather', '{"input":{"city":"Paris"}}', 'c1')];
    const linked = linkRequests(steps);
    expect(linked[1]!.args).toBe(steps[1]!.args);
    expect(malformed(linked).map((h) => h.anchor)).toEqual([steps[1]!.id]);
  });
});

describe('arguments captured as a Python repr while the request has them as JSON', () => {
  it("{'city': 'Lisbon'} (declared JSON) with the request {\"city\": \"Lisbon\"}: the request's arguments, a capture note, no malformed-structure", () => {
    const steps = [chat(1, 'c1', 'get_weather', { city: 'Lisbon' }), genaiTool(2, 'get_weather', "{'city': 'Lisbon'}", 'c1')];
    expect(malformed(steps).length).toBe(1);
    const linked = linkRequests(steps);
    expect(linked[1]!.args).toMatchObject({ parsed: { city: 'Lisbon' }, source: 'request', captured: "{'city': 'Lisbon'}", capturedAs: 'python-literal' });
    expect(malformed(linked)).toEqual([]);
  });

  it('a repr with other values than the request is not read: still not JSON, still reported', () => {
    const steps = [chat(1, 'c1', 'get_weather', { city: 'Lisbon' }), genaiTool(2, 'get_weather', "{'city': 'Porto'}", 'c1')];
    const linked = linkRequests(steps);
    expect(linked[1]!.args?.capturedAs).toBeUndefined();
    expect(malformed(linked).map((h) => h.detail)).toEqual([expect.stringContaining('arguments are not JSON')]);
  });

  it('values compared strictly: the repr 42 is not the JSON "42", True is true', () => {
    const a = [chat(1, 'c1', 'lookup_order', { order_id: '42' }), genaiTool(2, 'lookup_order', "{'order_id': 42}", 'c1')];
    expect(linkRequests(a)[1]!.args?.capturedAs).toBeUndefined();
    const b = [chat(1, 'c1', 'lookup_order', { order_id: '42', rush: true }), genaiTool(2, 'lookup_order', "{'order_id': '42', 'rush': True}", 'c1')];
    expect(linkRequests(b)[1]!.args).toMatchObject({ capturedAs: 'python-literal', parsed: { order_id: '42', rush: true } });
  });

  it('OpenLIT LangChain, a failed tool: its call id is the LangChain run id (no request has it), its arguments a repr; an unanswered request of that tool with equal arguments confirms them', () => {
    const failed = (at: number, argsText: string) =>
      read(
        at,
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'lookup_order',
          'gen_ai.tool.call.id': '01a23365-2366-76aa-8452-32eb015f7765',
          'gen_ai.tool.call.arguments': argsText,
          'error.type': 'OrderServiceUnavailable',
        },
        'execute_tool lookup_order',
      );
    const steps = [chat(1, 'call_order_42', 'lookup_order', { order_id: '42' }), failed(2, "{'order_id': '42'}")];
    expect(malformed(steps).length).toBe(1);
    const linked = linkRequests(steps);
    expect(linked[1]!.args).toMatchObject({ parsed: { order_id: '42' }, source: 'request', capturedAs: 'python-literal' });
    // the id stays the span's: only the arguments are confirmed
    expect(linked[1]!.toolCallId).toBe('01a23365-2366-76aa-8452-32eb015f7765');
    expect(malformed(linked)).toEqual([]);
    // other values than the unanswered request's: not confirmed, still reported
    const other = linkRequests([chat(1, 'call_order_42', 'lookup_order', { order_id: '42' }), failed(2, "{'order_id': '43'}")]);
    expect(other[1]!.args?.capturedAs).toBeUndefined();
    expect(malformed(other).length).toBe(1);
    // a tool step that started before the request cannot answer it
    const early = linkRequests([failed(1, "{'order_id': '42'}"), chat(2, 'call_order_42', 'lookup_order', { order_id: '42' })]);
    expect(early[0]!.args?.capturedAs).toBeUndefined();
  });
});
