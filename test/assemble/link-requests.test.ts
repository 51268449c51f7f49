/**
 * What a trajectory's LLM requests tell about the tool steps that answer them: the call id a
 * tool span did not carry, and the arguments where the tool span holds only the bare value of
 * a one-argument call. Spans are real-shaped (from the issue-19 LangGraph Python and
 * LangChain.js OpenInference captures) and read by the real normalizer.
 */
import { describe, expect, it } from 'vitest';
import { Assembler } from '../../src/assemble/assembler.ts';
import { captureGaps } from '../../src/assemble/capture-gaps.ts';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import { linkRequests } from '../../src/assemble/link-requests.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
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
/** One span read by the real normalizer; `at` orders it (seconds). */
function read(at: number, attributes: Attributes, parentSpanId: string | null = '00f067aa0ba902b7'): Step {
  next++;
  const span = makeSpan({
    spanId: next.toString(16).padStart(16, '0'),
    startTimeUnixNano: BigInt(at) * 1_000_000_000n,
    endTimeUnixNano: BigInt(at) * 1_000_000_000n + 500_000_000n,
    attributes,
  });
  if (parentSpanId === null) delete span.parentSpanId;
  else span.parentSpanId = parentSpanId;
  return normalizeSpan(span);
}

interface Call {
  id?: string;
  name: string;
  arguments: string;
}

/** An OpenInference LLM span (LangChain instrumentation) whose output asks for `calls`. */
function llm(at: number, calls: Call[], tools: Record<string, unknown> = {}): Step {
  const attributes: Attributes = { 'openinference.span.kind': 'LLM', 'llm.output_messages.0.message.role': 'assistant' };
  calls.forEach((c, k) => {
    const at = `llm.output_messages.0.message.tool_calls.${k}.tool_call`;
    if (c.id !== undefined) attributes[`${at}.id`] = c.id;
    attributes[`${at}.function.name`] = c.name;
    attributes[`${at}.function.arguments`] = c.arguments;
  });
  Object.entries(tools).forEach(([name, parameters], i) => {
    attributes[`llm.tools.${i}.tool.json_schema`] = JSON.stringify({ type: 'function', function: { name, parameters } });
  });
  return read(at, attributes);
}

/** LangGraph Python: the TOOL span's input is the bare value, no mime type (text). */
const langgraphTool = (at: number, name: string, input: string) =>
  read(at, { 'openinference.span.kind': 'TOOL', 'tool.name': name, 'input.value': input, 'output.value': 'ok' });
/** LangChain.js: a one-string-argument input collapsed to the string, mime type JSON for `42`. */
const langchainJsTool = (at: number, name: string, input: string, mime = 'application/json') =>
  read(at, { 'openinference.span.kind': 'TOOL', 'tool.name': name, 'input.value': input, 'input.mime_type': mime, 'output.value': 'ok' });

const lines = (steps: Step[]) => trajectoryToJson(makeTrajectory(steps))['steps'] as Record<string, unknown>[];

describe('linkRequests: arguments from the request a tool step answers', () => {
  it('LangGraph Python: "Paris" as text becomes the requested {"city": "Paris"}, marked derived, the text kept', () => {
    const chat = llm(1, [{ id: 'call_paris_1', name: 'get_weather', arguments: '{"city": "Paris"}' }]);
    const tool = langgraphTool(2, 'get_weather', 'Paris');
    const before = structuredClone(tool);
    const linked = linkRequests([chat, tool]);
    expect(linked[1]!.args).toEqual({
      raw: '{"city": "Paris"}',
      parsed: { city: 'Paris' },
      digest: jsonDigest({ city: 'Paris' }),
      source: 'request',
      captured: 'Paris',
      declared: 'text',
    });
    expect(linked[1]).toMatchObject({ toolCallId: 'call_paris_1', toolCallIdSource: 'request' });
    // the step given is not changed (the assembler keeps it as captured), the llm step is shared
    expect(tool).toEqual(before);
    expect(linked[0]).toBe(chat);
    const unlinked = lines([chat, tool])[1]!;
    expect('toolCallId' in unlinked).toBe(false);
    expect(unlinked['args']).toEqual({ raw: 'Paris', digest: tool.args!.digest });
    const line = trajectoryToJson(makeTrajectory(linked))['steps'] as Record<string, unknown>[];
    expect(line[1]).toMatchObject({
      toolCallId: 'call_paris_1',
      toolCallIdDerived: true,
      args: { raw: '{"city": "Paris"}', parsed: { city: 'Paris' }, source: 'request', captured: 'Paris' },
    });
  });

  it('LangChain.js: "42" (mime JSON, the number 42) becomes the requested {"order_id": "42"}; matched by name in order, no ids', () => {
    const steps = [
      llm(1, [{ name: 'get_weather', arguments: '{"city":"Paris"}' }]),
      langchainJsTool(2, 'get_weather', 'Paris', 'text/plain'),
      llm(3, [{ name: 'get_weather', arguments: '{"city":"Paris"}' }]),
      langchainJsTool(4, 'get_weather', 'Paris', 'text/plain'),
      llm(5, [{ name: 'lookup_order', arguments: '{"order_id":"42"}' }]),
      langchainJsTool(6, 'lookup_order', '42'),
      llm(7, [{ name: 'get_weather', arguments: '{"city":"Rome"}' }]),
      langchainJsTool(8, 'get_weather', 'Rome', 'text/plain'),
    ];
    expect(steps[5]!.args?.parsed).toBe(42);
    const linked = linkRequests(steps);
    expect(linked.filter((s) => s.kind === 'tool').map((s) => [s.args?.parsed, s.args?.source, s.args?.captured])).toEqual([
      [{ city: 'Paris' }, 'request', 'Paris'],
      [{ city: 'Paris' }, 'request', 'Paris'],
      [{ order_id: '42' }, 'request', '42'],
      [{ city: 'Rome' }, 'request', 'Rome'],
    ]);
    expect(linked.some((s) => s.toolCallId !== undefined)).toBe(false);
    // the repetition is now of the call, not of the text "Paris"
    const obs = toolRepetition(makeTrajectory(linked));
    expect(obs).toMatchObject({ status: 'observed', groups: [{ toolName: 'get_weather', argsDigest: jsonDigest({ city: 'Paris' }), count: 2 }] });
  });

  it('fills arguments the tool span did not capture at all', () => {
    const chat = llm(1, [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    const tool = read(2, { 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'output.value': 'sunny' });
    expect(tool.args).toBeUndefined();
    expect(captureGaps([chat, tool]).map((g) => g.reason)).toContain('tool-args-not-captured');
    const linked = linkRequests([chat, tool]);
    expect(linked[1]!.args).toEqual({ raw: '{"city":"Paris"}', parsed: { city: 'Paris' }, digest: jsonDigest({ city: 'Paris' }), source: 'request' });
    expect(captureGaps(linked).map((g) => g.reason)).not.toContain('tool-args-not-captured');
  });

  it('keeps a tool step own structured arguments: the capture wins', () => {
    const chat = llm(1, [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    const tool = langchainJsTool(2, 'get_weather', '{"city":"Lyon"}');
    const linked = linkRequests([chat, tool]);
    expect(linked[1]!.args).toBe(tool.args);
    expect(linked[1]!.toolCallId).toBe('c1');
  });

  it('derives nothing from a request whose arguments are not an object', () => {
    for (const requested of ['"Paris"', '42', '["Paris"]', 'Paris', '{"city":']) {
      const steps = [llm(1, [{ name: 'get_weather', arguments: requested }]), langgraphTool(2, 'get_weather', 'Paris')];
      expect(linkRequests(steps), requested).toBe(steps);
    }
  });

  it('derives nothing when requests of one tool name with different arguments could each be the step (no ids)', () => {
    // one output asks for two calls of the same tool; the tool spans hold the bare values only
    const parallel = [
      llm(1, [
        { name: 'get_weather', arguments: '{"city":"Paris"}' },
        { name: 'get_weather', arguments: '{"city":"Rome"}' },
      ]),
      langgraphTool(2, 'get_weather', 'Rome'),
      langgraphTool(2, 'get_weather', 'Paris'),
    ];
    expect(linkRequests(parallel)).toBe(parallel);
    // an earlier request whose tool span is missing: the later step may answer either
    const missing = [
      llm(1, [{ name: 'get_weather', arguments: '{"city":"Paris"}' }]),
      llm(2, [{ name: 'get_weather', arguments: '{"city":"Rome"}' }]),
      langgraphTool(3, 'get_weather', 'Rome'),
    ];
    expect(linkRequests(missing)).toBe(missing);
  });

  it('derives nothing the span own text contradicts: a request paired by position while the real one went unrecorded', () => {
    // the Paris request's tool span is missing and the Rome request's llm span too: by name in
    // order the Rome step would be paired with the Paris request
    const steps = [llm(1, [{ name: 'get_weather', arguments: '{"city":"Paris"}' }]), langgraphTool(3, 'get_weather', 'Rome')];
    expect(linkRequests(steps)).toBe(steps);
    // Python's repr of a several-argument call names every value: not contradicted
    const repr = [
      llm(1, [{ name: 'convert', arguments: '{"amount": 3, "exact": true, "to": "EUR"}' }]),
      langgraphTool(2, 'convert', "{'amount': 3, 'exact': True, 'to': 'EUR'}"),
    ];
    expect(linkRequests(repr)[1]!.args).toMatchObject({ parsed: { amount: 3, exact: true, to: 'EUR' }, source: 'request' });
  });

  it('derives from requests of one tool name when they ask for the same arguments, or when call ids match', () => {
    const same = [
      llm(1, [
        { name: 'get_weather', arguments: '{"city":"Paris"}' },
        { name: 'get_weather', arguments: '{ "city": "Paris" }' },
      ]),
      langgraphTool(2, 'get_weather', 'Paris'),
      langgraphTool(2, 'get_weather', 'Paris'),
    ];
    expect(
      linkRequests(same)
        .filter((s) => s.kind === 'tool')
        .map((s) => s.args?.parsed),
    ).toEqual([{ city: 'Paris' }, { city: 'Paris' }]);
    const chat = llm(1, [
      { id: 'c_paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'c_rome', name: 'get_weather', arguments: '{"city":"Rome"}' },
    ]);
    const withIds = [chat, read(2, { 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'tool_call.id': 'c_rome', 'input.value': 'Rome' })];
    expect(withIds[1]!.toolCallId).toBe('c_rome');
    expect(linkRequests(withIds)[1]!.args).toMatchObject({ parsed: { city: 'Rome' }, source: 'request', captured: 'Rome' });
  });

  it('returns the same array when nothing is derived', () => {
    const steps = [llm(1, [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }])];
    expect(linkRequests(steps)).toBe(steps);
  });
});

describe('linkRequests: call ids', () => {
  it('fills a tool step lacking a call id from the request it answers, marked derived on the trajectory line', () => {
    const chat = llm(1, [
      { id: 'call_paris_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'call_rome_1', name: 'get_weather', arguments: '{"city":"Rome"}' },
    ]);
    const first = langgraphTool(2, 'get_weather', '{"city":"Paris"}');
    const second = langgraphTool(3, 'get_weather', '{"city":"Rome"}');
    const linked = linkRequests([chat, first, second]);
    expect(linked.map((s) => s.toolCallId)).toEqual([undefined, 'call_paris_1', 'call_rome_1']);
    const out = trajectoryToJson(makeTrajectory(linked))['steps'] as Record<string, unknown>[];
    expect(out[1]).toMatchObject({ toolName: 'get_weather', toolCallId: 'call_paris_1', toolCallIdDerived: true });
    expect('toolCallId' in out[0]!).toBe(false);
    expect('toolCallId' in first).toBe(false);
  });

  it('never replaces a captured call id', () => {
    const chat = read(1, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.output.messages': '[{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}]}]',
    });
    const tool = read(2, {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.call.arguments': '{"city":"Paris"}',
    });
    const steps = [chat, tool];
    expect(linkRequests(steps)).toBe(steps);
    const out = lines(steps);
    expect(out[1]).toMatchObject({ toolCallId: 'call_1' });
    expect('toolCallIdDerived' in out[1]!).toBe(false);
  });
});

describe('malformed-structure on derived arguments', () => {
  const orderSchema = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };

  it('validates the requested arguments against the declared schema exactly as captured ones', () => {
    const derived = linkRequests([
      llm(1, [{ name: 'lookup_order', arguments: '{"order_id": 42}' }], { lookup_order: orderSchema }),
      langchainJsTool(2, 'lookup_order', '42'),
    ]);
    const captured = [
      llm(1, [{ name: 'lookup_order', arguments: '{"order_id": 42}' }], { lookup_order: orderSchema }),
      langchainJsTool(2, 'lookup_order', '{"order_id": 42}'),
    ];
    const detail = (steps: Step[]) => malformedStructure(makeTrajectory(steps), defaultChecksConfig).map((h) => h.detail);
    expect(detail(derived)).toEqual(['tool "lookup_order" arguments violate its declared schema: $.order_id: expected string, got integer']);
    expect(detail(derived)).toEqual(detail(captured));
  });

  it('still reports a declared-JSON capture that does not parse, whatever the request supplied', () => {
    const chat = llm(1, [{ name: 'lookup_order', arguments: '{"order_id": "42"}' }]);
    const tool = langchainJsTool(2, 'lookup_order', '{"order_id": "42"');
    const linked = linkRequests([chat, tool]);
    expect(linked[1]!.args?.source).toBe('request');
    expect(malformedStructure(makeTrajectory(linked), defaultChecksConfig).map((h) => h.detail)).toEqual([
      'tool "lookup_order" arguments are not JSON (openinference): "{"order_id": "42""',
    ]);
  });
});

describe('the assembler hands the checks linked steps and keeps the captured ones', () => {
  it('a late copy of a tool span is a duplicate, not a conflict, and the next revision is linked again', () => {
    const closed: Trajectory[] = [];
    const assembler = new Assembler(AssemblerLimitsSchema.parse({ quietPeriodMs: 2_000 }), (t) => closed.push(t));
    const root = read(0, { 'openinference.span.kind': 'AGENT' }, null);
    const chat = { ...llm(1, [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }]), parentId: root.id };
    const tool = { ...langgraphTool(2, 'get_weather', 'Paris'), parentId: root.id };
    for (const s of [root, chat, tool]) assembler.add(s, 0);
    assembler.advance(2_000);
    expect(closed[0]!.steps.find((s) => s.id === tool.id)!.args).toMatchObject({ parsed: { city: 'Paris' }, source: 'request' });
    assembler.add(structuredClone(tool), 2_500);
    const late = { ...langgraphTool(3, 'get_weather', 'Paris'), parentId: root.id };
    assembler.add(late, 2_500);
    assembler.advance(5_000);
    expect(assembler.stats()).toMatchObject({ duplicateSpans: 1, conflictingSpans: 0 });
    expect(closed[1]!.conflicts).toEqual([]);
    expect(closed[1]!.steps.find((s) => s.id === tool.id)!.args?.source).toBe('request');
  });
});
