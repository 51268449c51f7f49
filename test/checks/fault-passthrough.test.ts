import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { faultPassthrough } from '../../src/checks/fault-passthrough.ts';
import { agent, failedTool, step, tool, trajectory } from './builders.ts';

const cfg = defaultChecksConfig;
const MESSAGE = 'Connection refused by upstream host db-primary:5432';

describe('fault-passthrough: the error text carried on', () => {
  it('fires when the error text reappears in a later tool call and in the final output', () => {
    const bad = failedTool('query_db', MESSAGE, { at: 1 });
    const mail = tool('write_report', { at: 3, args: JSON.stringify({ body: `Status: ${MESSAGE}` }) });
    const run = agent(`Report written. ${MESSAGE}`, { at: 0, end: 10 });
    const retry = tool('query_db', { at: 5, args: '{}', result: 'rows: 3' });
    const hits = faultPassthrough(trajectory([run, bad, mail, retry]), cfg);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.anchor).toBe(bad.id);
    expect(hits[0]!.detail).toBe(
      `error text of tool "query_db" ("${MESSAGE}") reappears in tool "write_report" arguments, the final output of agent "assistant"`,
    );
    expect(hits[0]!.evidence.map((e) => e.spanId)).toEqual([bad.id, mail.id, run.id]);
  });

  it('stays silent when the error only goes back to the model, or is too short to be distinctive', () => {
    const bad = failedTool('query_db', MESSAGE, { at: 1 });
    const llm = step('llm', { at: 2, input: `Observation: ${MESSAGE}` });
    const retry = tool('query_db', { at: 3, args: '{}', result: 'rows: 3' });
    const short = failedTool('ping', 'timeout', { at: 4 });
    const pingAgain = tool('ping', { at: 5, args: '{}', result: 'pong' });
    const run = agent('All good; timeout earlier was transient', { at: 0, end: 10 });
    expect(faultPassthrough(trajectory([run, bad, llm, retry, short, pingAgain]), cfg)).toEqual([]);
  });

  it('does not count text in steps that began before the failure ended', () => {
    const bad = failedTool('query_db', MESSAGE, { at: 2, end: 4 });
    const concurrent = tool('log', { at: 3, args: JSON.stringify({ line: MESSAGE }) });
    const fixed = tool('query_db', { at: 5, args: '{}' });
    expect(faultPassthrough(trajectory([agent('ok', { at: 0, end: 9 }), bad, concurrent, fixed]), cfg)).toEqual([]);
  });
});

describe('fault-passthrough: success reported over an unretried failure', () => {
  it('fires once per tool whose failures were never followed by a success, at its last failure', () => {
    const first = failedTool('page_down', 'unexpected keyword argument "x" for page_down()', { at: 1 });
    const second = failedTool('page_down', 'unexpected keyword argument "y" for page_down()', { at: 2 });
    const run = agent('The answer is 185', { at: 0, end: 10 });
    const hits = faultPassthrough(trajectory([run, first, second]), cfg);
    expect(hits).toEqual([
      {
        pattern: 'fault-passthrough',
        anchor: second.id,
        detail: 'tool "page_down" failed 2 times with no later success, and the run ended reporting success (agent "assistant")',
        evidence: [second, first, run].map((s) => ({ traceId: s.traceId, spanId: s.id })),
      },
    ]);
  });

  it('stays silent when the tool later succeeded, or the run itself failed, or has no output', () => {
    const bad = failedTool('search', 'No results found for that query string', { at: 1 });
    const good = tool('search', { at: 2, args: '{"q":"shorter"}', result: 'found' });
    expect(faultPassthrough(trajectory([agent('done', { at: 0, end: 9 }), bad, good]), cfg)).toEqual([]);

    const failedRun = agent('gave up', { at: 0, end: 9, statusCode: 2, error: { source: 'status' } });
    expect(faultPassthrough(trajectory([failedRun, failedTool('search', 'x', { at: 1 })]), cfg)).toEqual([]);
    expect(faultPassthrough(trajectory([agent(undefined, { at: 0, end: 9 }), failedTool('search', 'x', { at: 1 })]), cfg)).toEqual(
      [],
    );
  });

  it('claims "never retried" only from a complete capture', () => {
    const steps = [agent('The answer is 185', { at: 0, end: 10 }), failedTool('page_down', 'bad kwarg', { at: 1 })];
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
});
