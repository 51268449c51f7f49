import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { faultPassthrough } from '../../src/checks/fault-passthrough.ts';
import type { Step } from '../../src/normalize/step.ts';
import { agent, failedTool, step, tool, trajectory } from './builders.ts';

const cfg = defaultChecksConfig;
const MESSAGE = 'Connection refused by upstream host db-primary:5432';
const TRACE_2 = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

const under = (parent: Step) => ({ parentId: parent.id, traceId: parent.traceId });
/** A LangChain message as OpenInference serializes it (pydantic `model_dump`). */
const lc = (type: string, content: string, extra: object = {}) => ({ content, type, additional_kwargs: {}, response_metadata: {}, ...extra });
const state = (...messages: object[]) => JSON.stringify({ messages });

describe('fault-passthrough: the error text used later', () => {
  it('fires when the error text reappears in a later tool call and in the answer of its run', () => {
    const run = agent(`Report written. ${MESSAGE}`, { at: 0, end: 10 });
    const bad = failedTool('query_db', MESSAGE, { at: 1, ...under(run) });
    const mail = tool('write_report', { at: 3, args: JSON.stringify({ body: `Status: ${MESSAGE}` }), ...under(run) });
    const retry = tool('query_db', { at: 5, args: '{}', result: 'rows: 3', ...under(run) });
    const hits = faultPassthrough(trajectory([run, bad, mail, retry]), cfg);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.anchor).toBe(bad.id);
    expect(hits[0]!.detail).toBe(
      `error text of tool "query_db" ("${MESSAGE}") reappears in tool "write_report" arguments, the answer of its run (agent "assistant")`,
    );
    expect(hits[0]!.evidence.map((e) => e.spanId)).toEqual([bad.id, mail.id, run.id]);
  });

  it('stays silent when the error only goes back to the model, or is too short to be distinctive', () => {
    const run = agent('All good; timeout earlier was transient', { at: 0, end: 10 });
    const bad = failedTool('query_db', MESSAGE, { at: 1, ...under(run) });
    const llm = step('llm', { at: 2, input: `Observation: ${MESSAGE}`, ...under(run) });
    const retry = tool('query_db', { at: 3, args: '{}', result: 'rows: 3', ...under(run) });
    const short = failedTool('ping', 'timeout', { at: 4, ...under(run) });
    const pingAgain = tool('ping', { at: 5, args: '{}', result: 'pong', ...under(run) });
    expect(faultPassthrough(trajectory([run, bad, llm, retry, short, pingAgain]), cfg)).toEqual([]);
  });

  it('does not count text in steps that began before the failure ended', () => {
    const run = agent('ok', { at: 0, end: 9 });
    const bad = failedTool('query_db', MESSAGE, { at: 2, end: 4, ...under(run) });
    const concurrent = tool('log', { at: 3, args: JSON.stringify({ line: MESSAGE }), ...under(run) });
    const fixed = tool('query_db', { at: 5, args: '{}', ...under(run) });
    expect(faultPassthrough(trajectory([run, bad, concurrent, fixed]), cfg)).toEqual([]);
  });

  it('counts an outbound send called with the error text', () => {
    const run = agent('Done.', { at: 0, end: 10 });
    const bad = failedTool('fetch_invoice', MESSAGE, { at: 1, ...under(run) });
    const send = tool('send_email', { at: 3, args: JSON.stringify({ to: 'c@x.io', body: `Your invoice: ${MESSAGE}` }), ...under(run) });
    const retry = tool('fetch_invoice', { at: 5, args: '{}', result: 'ok', ...under(run) });
    expect(faultPassthrough(trajectory([run, bad, send, retry]), cfg).map((h) => h.detail)).toEqual([
      `error text of tool "fetch_invoice" ("${MESSAGE}") reappears in tool "send_email" arguments`,
    ]);
  });
});

describe('fault-passthrough: one failure, however many spans it propagated through', () => {
  it("claims a reappearance of a wrapper's error at the step where the failure began (smolagents Step spans)", () => {
    const run = agent('Done.', { at: 0, end: 20 });
    const stepSpan = step('other', { name: 'Step 3', at: 1, end: 4, ...under(run) });
    const bad = failedTool('lookup_order', `OrderServiceUnavailable: ${MESSAGE}`, { at: 2, end: 3, ...under(stepSpan) });
    const wrapped = `Error executing tool 'lookup_order' with arguments {'order_id': '42'}: OrderServiceUnavailable: ${MESSAGE}`;
    const failedStep = {
      ...stepSpan,
      statusCode: 2 as const,
      eventNames: ['exception'],
      error: { source: 'exception' as const, type: 'AgentToolExecutionError', message: wrapped },
    };
    const mail = tool('send_email', { at: 6, args: JSON.stringify({ body: wrapped }), ...under(run) });
    const retry = tool('lookup_order', { at: 8, args: '{}', result: 'shipped', ...under(run) });
    const hits = faultPassthrough(trajectory([run, failedStep, bad, mail, retry]), cfg);
    expect(hits.map((h) => h.anchor)).toEqual([bad.id]);
    expect(hits[0]!.evidence.map((e) => e.spanId)).toContain(failedStep.id);
  });
});

describe('fault-passthrough: replaying the conversation is not passing the fault through', () => {
  it('LangGraph + OpenInference: agent nodes, tools nodes and a root output that replay the message state', () => {
    const toolError = `Error: ${MESSAGE}`;
    const first = lc('ai', '', { tool_calls: [{ name: 'query_db', args: { q: 'x' }, id: 'c1', type: 'tool_call' }] });
    const failedMsg = lc('tool', toolError, { tool_call_id: 'c1', status: 'error' });
    const second = lc('ai', '', { tool_calls: [{ name: 'query_db', args: { q: 'y' }, id: 'c2', type: 'tool_call' }] });
    const okMsg = lc('tool', 'rows: 3', { tool_call_id: 'c2' });
    const final = lc('ai', 'There are 3 rows.');
    const user = lc('human', 'How many rows?');
    const root = step('other', {
      name: 'LangGraph',
      convention: 'openinference',
      at: 0,
      end: 20,
      input: state(user),
      result: state(user, first, failedMsg, second, okMsg, final),
    });
    const node = (at: number, input: object[], output: object) =>
      step('agent', { name: 'agent', convention: 'openinference', at, end: at + 1, input: state(...input), result: state(output), ...under(root) });
    const a1 = node(1, [user], first);
    const tools1 = step('other', { name: 'tools', at: 3, end: 5, input: state(user, first), result: state(failedMsg), ...under(root) });
    const bad = failedTool('query_db', toolError, { at: 3, end: 4, ...under(tools1) });
    const a2 = node(6, [user, first, failedMsg], second);
    const llm2 = step('llm', { at: 6, end: 7, input: toolError, ...under(a2) });
    const tools2 = step('other', { name: 'tools', at: 8, end: 10, input: state(user, first, failedMsg, second), result: state(okMsg), ...under(root) });
    const good = tool('query_db', { at: 8, end: 9, args: 'y', result: 'rows: 3', ...under(tools2) });
    const a3 = node(11, [user, first, failedMsg, second, okMsg], final);
    expect(faultPassthrough(trajectory([root, a1, tools1, bad, a2, llm2, tools2, good, a3]), cfg)).toEqual([]);

    // The same run whose answer hands the error on is passthrough.
    const leaked = lc('ai', `Here is the status: ${toolError}`);
    const root2 = { ...root, result: state(user, first, failedMsg, leaked) };
    const a2leak = { ...a2, result: state(leaked) };
    const hits = faultPassthrough(trajectory([root2, a1, tools1, bad, a2leak]), cfg);
    expect(hits.map((h) => [h.anchor, h.detail])).toEqual([
      [
        bad.id,
        `error text of tool "query_db" ("${toolError}") reappears in the answer of its run (other step "LangGraph"); ` +
          'tool "query_db" failed once with no later success, and its run ended reporting success (other step "LangGraph")',
      ],
    ]);
  });

  it('LlamaIndex and Strands: aggregation and event-loop spans that carry the history are not carriers', () => {
    const root = step('other', { name: 'FunctionAgent.run', at: 0, end: 10, result: 'The weather is sunny.' });
    const bad = failedTool('get_weather', MESSAGE, { at: 1, ...under(root) });
    const aggregate = step('other', {
      name: 'FunctionAgent.aggregate_tool_results',
      at: 3,
      input: JSON.stringify({ tool_results: [MESSAGE] }),
      ...under(root),
    });
    const cycle = step('other', {
      name: 'execute_event_loop_cycle',
      at: 4,
      input: `[{"role":"user","content":[{"toolResult":{"content":"${MESSAGE}"}}]}]`,
      ...under(root),
    });
    const good = tool('get_weather', { at: 6, args: '{"city":"Paris"}', result: 'sunny', ...under(root) });
    expect(faultPassthrough(trajectory([root, bad, aggregate, cycle, good]), cfg)).toEqual([]);
  });

  it('a delegated agent is a carrier through its task, not through the history replayed to it', () => {
    const lead = agent('Delegated.', { at: 0, end: 20, agentName: 'supervisor' });
    const bad = failedTool('lookup', MESSAGE, { at: 1, ...under(lead) });
    const task = agent('ok', { at: 3, end: 5, agentName: 'writer', input: `Write to the customer that ${MESSAGE}`, ...under(lead) });
    const replay = agent('ok', {
      at: 6,
      end: 8,
      agentName: 'researcher',
      input: JSON.stringify([
        { role: 'user', content: 'Find the record' },
        { role: 'tool', content: MESSAGE },
      ]),
      ...under(lead),
    });
    const retry = tool('lookup', { at: 9, args: '{}', result: 'found', ...under(lead) });
    expect(faultPassthrough(trajectory([lead, bad, task, replay, retry]), cfg).map((h) => h.detail)).toEqual([
      `error text of tool "lookup" ("${MESSAGE}") reappears in agent "writer" task`,
    ]);
  });
});

describe('fault-passthrough: success reported over an unretried failure', () => {
  it('fires once per tool whose failures were never followed by a success, at the first of them', () => {
    const run = agent('The answer is 185', { at: 0, end: 10 });
    const first = failedTool('page_down', 'unexpected keyword argument "x" for page_down()', { at: 1, ...under(run) });
    const second = failedTool('page_down', 'unexpected keyword argument "y" for page_down()', { at: 2, ...under(run) });
    const hits = faultPassthrough(trajectory([run, first, second]), cfg);
    expect(hits).toEqual([
      {
        pattern: 'fault-passthrough',
        anchor: first.id,
        detail: 'tool "page_down" failed 2 times with no later success, and its run ended reporting success (agent "assistant")',
        evidence: [first, second, run].map((s) => ({ traceId: s.traceId, spanId: s.id })),
      },
    ]);
  });

  it('stays silent when the tool later succeeded, or the run itself failed, or its outcome cannot be read', () => {
    const done = agent('done', { at: 0, end: 9 });
    const bad = failedTool('search', 'No results found for that query string', { at: 1, ...under(done) });
    const good = tool('search', { at: 2, args: '{"q":"shorter"}', result: 'found', ...under(done) });
    expect(faultPassthrough(trajectory([done, bad, good]), cfg)).toEqual([]);

    const failedRun = agent('gave up', { at: 0, end: 9, statusCode: 2, error: { source: 'status' } });
    expect(faultPassthrough(trajectory([failedRun, failedTool('search', 'x', { at: 1, ...under(failedRun) })]), cfg)).toEqual([]);
    const silent = agent(undefined, { at: 0, end: 9 });
    expect(faultPassthrough(trajectory([silent, failedTool('search', 'x', { at: 1, ...under(silent) })]), cfg)).toEqual([]);
  });

  it('claims "never retried" only from a complete capture', () => {
    const run = agent('The answer is 185', { at: 0, end: 10 });
    const steps = [run, failedTool('page_down', 'bad kwarg', { at: 1, ...under(run) })];
    expect(faultPassthrough(trajectory(steps), cfg)).toHaveLength(1);
    expect(faultPassthrough(trajectory(steps, { complete: false, incompleteReasons: ['orphan-parents'] }), cfg)).toEqual([]);
  });

  it('claims "never retried" only when no capture gap may hide the retry', () => {
    const steps = [agent('The answer is 185', { at: 0, end: 10 }), failedTool('page_down', 'bad kwarg', { at: 1 })];
    // a later tool span with no tool name may be the successful retry
    const nameless = step('tool', { at: 3, name: 'execute_tool', args: '{}', result: 'ok' });
    expect(faultPassthrough(trajectory([...steps, nameless]), cfg)).toEqual([]);
    // so may a tool call the model requested that has no tool span
    const requested = step('llm', { at: 2, requestedToolCalls: [{ id: 'call_9', name: 'page_down' }] });
    expect(faultPassthrough(trajectory([...steps, requested]), cfg)).toEqual([]);
    // but a requested call of another tool cannot be page_down's retry
    const other = step('llm', { at: 2, requestedToolCalls: [{ id: 'call_9', name: 'final_answer' }] });
    expect(faultPassthrough(trajectory([...steps, other]), cfg)).toHaveLength(1);
    // a later step whose arguments were not captured hides no call: the claim stands
    expect(faultPassthrough(trajectory([...steps, tool('web_search', { at: 3, result: 'ok' })]), cfg)).toHaveLength(1);
  });

  it("reads Pydantic AI's answer from final_result, and the OpenAI Agents SDK's from the last model reply", () => {
    const pydantic = step('other', { name: 'agent run', at: 0, end: 10, attributes: { final_result: 'Paris is sunny' } });
    const p1 = failedTool('get_weather', 'upstream 503', { at: 1, ...under(pydantic) });
    expect(faultPassthrough(trajectory([pydantic, p1]), cfg).map((h) => h.detail)).toEqual([
      'tool "get_weather" failed once with no later success, and its run ended reporting success (other step "agent run")',
    ]);

    const workflow = step('other', { name: 'Agent workflow', at: 0, end: 10 });
    const agentSpan = agent(undefined, { at: 0, end: 10, agentName: 'Assistant', ...under(workflow) });
    const o1 = failedTool('get_weather', 'upstream 503', { at: 1, ...under(agentSpan) });
    const reply = (output: object[]) => step('llm', { at: 3, end: 4, result: JSON.stringify({ id: 'resp_1', output }), ...under(agentSpan) });
    const answered = reply([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is sunny.' }] }]);
    expect(faultPassthrough(trajectory([workflow, agentSpan, o1, answered]), cfg).map((h) => h.detail)).toEqual([
      'tool "get_weather" failed once with no later success, and its run ended reporting success (llm step "llm")',
    ]);
    // A last reply that asks for another tool call is no answer: the outcome is absent, no claim.
    const calling = reply([{ type: 'function_call', name: 'get_weather', arguments: '{}', call_id: 'c' }]);
    expect(faultPassthrough(trajectory([workflow, agentSpan, o1, calling]), cfg)).toEqual([]);
  });

  it('compares each turn of a session with its own run: a later turn neither rescues nor indicts an earlier one', () => {
    const turn1 = agent('Sorry, I could not check the weather.', { at: 0, end: 5 });
    const failed1 = failedTool('get_weather', 'upstream 503', { at: 1, ...under(turn1) });
    const turn2 = agent('It is sunny.', { at: 10, end: 15, traceId: TRACE_2 });
    const ok2 = tool('get_weather', { at: 11, args: '{}', result: 'sunny', ...under(turn2) });
    const t = { ...trajectory([turn1, failed1, turn2, ok2]), traceIds: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', TRACE_2] };
    expect(faultPassthrough(t, cfg).map((h) => h.anchor)).toEqual([failed1.id]);

    const gaveUp = { ...turn1, statusCode: 2 as const, error: { source: 'status' as const } };
    const t2 = { ...trajectory([gaveUp, failed1, turn2, ok2]), traceIds: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', TRACE_2] };
    expect(faultPassthrough(t2, cfg)).toEqual([]);
  });

  it('several agent steps under one root are one run: LangGraph agent nodes do not each end a run', () => {
    const root = step('other', { name: 'LangGraph', at: 0, end: 20, result: state(lc('human', 'q'), lc('ai', 'Final answer.')) });
    const n1 = agent(state(lc('ai', '', { tool_calls: [{ name: 'search', args: {}, id: 'a' }] })), {
      at: 1,
      name: 'agent',
      agentName: undefined,
      ...under(root),
    });
    const bad = failedTool('search', 'upstream 503', { at: 3, ...under(root) });
    const n2 = agent(state(lc('ai', '', { tool_calls: [{ name: 'search', args: {}, id: 'b' }] })), {
      at: 5,
      name: 'agent',
      agentName: undefined,
      ...under(root),
    });
    const good = tool('search', { at: 7, args: '{}', result: 'found', ...under(root) });
    const n3 = agent(state(lc('ai', 'Final answer.')), { at: 9, name: 'agent', agentName: undefined, ...under(root) });
    // The first agent node "reported" nothing final, and the retry inside the same run succeeded.
    expect(faultPassthrough(trajectory([root, n1, bad, n2, good, n3]), cfg)).toEqual([]);
  });
});
