import { describe, expect, it } from 'vitest';
import { defaultChecksConfig, parseChecksConfig } from '../../src/checks/config.ts';
import { errorOutput } from '../../src/checks/error-output.ts';
import { ref } from '../../src/checks/hit-text.ts';
import type { StepError } from '../../src/normalize/step.ts';
import { agent, failedTool, step, type StepSpec, tool, trajectory } from './builders.ts';

const cfg = defaultChecksConfig;

describe('error-output', () => {
  it('fires once per failed step, anchored at it, quoting the error', () => {
    const bad = failedTool('web_search', 'No results found for query "x"');
    const t = trajectory([agent('done', { at: 0, end: 100 }), tool('web_search', { at: 1, args: '{"q":"y"}' }), bad]);
    const hits = errorOutput(t, cfg);
    expect(hits).toEqual([
      {
        pattern: 'error-output',
        anchor: bad.id,
        detail: 'tool "web_search" failed (exception ToolError): No results found for query "x"',
        evidence: [{ traceId: bad.traceId, spanId: bad.id }],
      },
    ]);
  });

  it('reads an exception event under an unset status, and error.type', () => {
    const viaEvent = tool('a', { eventNames: ['exception'] });
    const viaType = tool('b', { attributes: { 'error.type': 'tool_error' } });
    const hits = errorOutput(trajectory([viaEvent, viaType]), cfg);
    expect(hits.map((h) => [h.anchor, h.detail])).toEqual([
      [viaEvent.id, 'tool "a" failed (exception)'],
      [viaType.id, 'tool "b" failed (error.type tool_error)'],
    ]);
  });

  it('recognizes error payloads in tool results under an ok status', () => {
    const results = [
      'Error: file not found',
      'ValueError: bad input\nmore',
      'Traceback (most recent call last):\n  File "x.py"',
      '{"error": {"code": 404, "message": "missing"}}',
      '{"content": [], "isError": true}',
    ];
    const steps = results.map((result) => tool('read_file', { result, statusCode: 1 }));
    const hits = errorOutput(trajectory(steps), cfg);
    expect(hits.map((h) => h.anchor)).toEqual(steps.map((s) => s.id));
    expect(hits[0]!.detail).toBe('tool "read_file" failed (result): Error: file not found');
  });

  it('stays silent on results that only mention errors, and on non-tool text', () => {
    const steps = [
      tool('lint', { result: 'No errors found.' }),
      tool('lint', { result: 'The last error: none' }),
      tool('api', { result: '{"error": null, "data": 1}' }),
      tool('api', { result: '{"isError": false}' }),
      tool('api', { result: '[{"error": "x"}]' }),
      step('llm', { result: 'Error: I cannot do that' }),
      agent('ok'),
    ];
    expect(errorOutput(trajectory(steps), cfg)).toEqual([]);
  });

  it('follows configured payload rules', () => {
    const custom = parseChecksConfig({ errorPayload: { resultPatterns: ['^FAILED'], jsonErrorKeys: [] } }, 'test');
    const steps = [tool('x', { result: 'FAILED to connect' }), tool('y', { result: 'Error: nope' })];
    expect(errorOutput(trajectory(steps), custom).map((h) => h.anchor)).toEqual([steps[0]!.id]);
  });
});

/** A failed span as OpenInference/OTel record it: status error and an `exception` event. */
function failedStep(kind: 'other' | 'agent', name: string, type: string | undefined, message: string | undefined, spec: StepSpec) {
  const error: StepError = { source: 'exception' };
  if (type !== undefined) error.type = type;
  if (message !== undefined) error.message = message;
  return step(kind, { name, statusCode: 2, eventNames: ['exception'], error, ...spec });
}

describe('error-output: a failure that propagates to enclosing steps is one failure', () => {
  // The smolagents + OpenInference capture (smolagents 1.26 + OpenInference, run by the framework matrix): the tool span fails, and
  // the CHAIN span of the agent step that ran it fails with AgentToolExecutionError wrapping it.
  function smolagentsStep3() {
    const run = agent('done', { id: 'a000000000000001', name: 'ToolCallingAgent.run', at: 0, end: 100 });
    const step3 = failedStep(
      'other',
      'Step 3',
      'smolagents.utils.AgentToolExecutionError',
      "Error executing tool 'lookup_order' with arguments {'order_id': '42'}: OrderServiceUnavailable: order service timed out after 30s\nPlease try again or use another tool",
      { id: 'a000000000000002', parentId: run.id, at: 10, end: 20 },
    );
    const model = step('llm', { id: 'a000000000000003', name: 'OpenAIModel.generate', parentId: step3.id, at: 11, end: 14, statusCode: 1 });
    const lookup = failedTool('lookup_order', 'order service timed out after 30s', {
      id: 'a000000000000004',
      name: 'SimpleTool',
      parentId: step3.id,
      at: 15,
      end: 16,
      error: { source: 'exception', type: 'matrix_common.OrderServiceUnavailable', message: 'order service timed out after 30s' },
    });
    return { run, step3, model, lookup };
  }

  it('smolagents: reported once, at the tool, with the wrapping step as evidence', () => {
    const { run, step3, model, lookup } = smolagentsStep3();
    const hits = errorOutput(trajectory([run, step3, model, lookup]), cfg);
    expect(hits).toEqual([
      {
        pattern: 'error-output',
        anchor: lookup.id,
        detail:
          'tool "lookup_order" failed (exception matrix_common.OrderServiceUnavailable): order service timed out after 30s; propagated to other step "Step 3"',
        evidence: [ref(lookup), ref(step3)],
      },
    ]);
  });

  it('an enclosing step that failed for a different reason of its own is reported too', () => {
    const { run, step3, model, lookup } = smolagentsStep3();
    const ownReason = {
      ...step3,
      error: { source: 'exception' as const, type: 'smolagents.utils.AgentMaxStepsError', message: 'Reached max steps.' },
    };
    const hits = errorOutput(trajectory([run, ownReason, model, lookup]), cfg);
    expect(hits.map((h) => [h.anchor, h.evidence.length])).toEqual([
      [step3.id, 1],
      [lookup.id, 1],
    ]);
  });

  it('three levels: tool, agent step, run (each recording the exception as it passes) are one failure', () => {
    const run = failedStep('agent', 'CodeAgent.run', 'smolagents.utils.AgentExecutionError', undefined, { at: 0, end: 50 });
    const message =
      "Error when executing tool page_down with arguments {'page_down': ''}: TypeError: PageDownTool.forward() got an unexpected keyword argument 'page_down'";
    const outerStep = failedStep('other', 'Step 1', 'smolagents.utils.AgentExecutionError', message, { parentId: run.id, at: 1, end: 40 });
    const innerRun = failedStep('agent', 'ToolCallingAgent.run', 'smolagents.utils.AgentExecutionError', message, {
      parentId: outerStep.id,
      at: 2,
      end: 39,
    });
    const pageDown = failedTool('page_down', "PageDownTool.forward() got an unexpected keyword argument 'page_down'", {
      parentId: innerRun.id,
      at: 3,
      end: 4,
      error: { source: 'exception', type: 'TypeError', message: "PageDownTool.forward() got an unexpected keyword argument 'page_down'" },
    });
    const hits = errorOutput(trajectory([run, outerStep, innerRun, pageDown]), cfg);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.anchor).toBe(pageDown.id);
    expect(hits[0]!.evidence).toEqual([ref(pageDown), ref(innerRun), ref(outerStep), ref(run)]);
    expect(hits[0]!.detail).toMatch(/; propagated to agent "ToolCallingAgent\.run", other step "Step 1", agent "CodeAgent\.run"$/);
  });

  it('OpenTelemetry defaults: the same exception recorded on every span it escapes is one failure', () => {
    // start_as_current_span(record_exception=True, set_status_on_exception=True) at each level.
    const error = { source: 'exception' as const, type: 'KeyError', message: "'id'" };
    const outer = step('agent', { name: 'invoke_agent', statusCode: 2, eventNames: ['exception'], error, at: 0, end: 10 });
    const middle = step('other', { name: 'handle', parentId: outer.id, statusCode: 2, eventNames: ['exception'], error, at: 1, end: 9 });
    const inner = tool('parse', { parentId: middle.id, statusCode: 2, eventNames: ['exception'], error, at: 2, end: 3 });
    const hits = errorOutput(trajectory([outer, middle, inner]), cfg);
    expect(hits.map((h) => [h.anchor, h.evidence.map((e) => e.spanId)])).toEqual([[inner.id, [inner.id, middle.id, outer.id]]]);
  });

  it('the same short text under a different type is not the same failure', () => {
    const outer = failedStep('other', 'step', 'ValueError', "'id'", { at: 0, end: 10 });
    const inner = failedTool('parse', "'id'", { parentId: outer.id, at: 1, end: 2, error: { source: 'exception', type: 'KeyError', message: "'id'" } });
    expect(errorOutput(trajectory([outer, inner]), cfg)).toHaveLength(2);
  });

  it('a short inner text merely contained is not the same failure; printed as `Type: text` it is', () => {
    const inner = (parentId: string) =>
      failedTool('upload', 'timed out', { parentId, at: 1, end: 2, error: { source: 'exception', type: 'TimeoutError', message: 'timed out' } });
    const contained = failedStep('other', 'step', 'UploadError', 'quota check timed out after the upload', { at: 0, end: 10 });
    expect(errorOutput(trajectory([contained, inner(contained.id)]), cfg)).toHaveLength(2);
    const printed = failedStep('other', 'step', 'UploadError', 'upload failed: TimeoutError: timed out', { at: 0, end: 10 });
    expect(errorOutput(trajectory([printed, inner(printed.id)]), cfg)).toHaveLength(1);
  });

  it('an enclosing step with status error and no message of its own repeats the failure that ended inside it last', () => {
    const outer = step('agent', { name: 'invoke_agent', statusCode: 2, error: { source: 'status' }, at: 0, end: 10 });
    const lookup = failedTool('lookup_order', 'order service timed out after 30s', { parentId: outer.id, at: 1, end: 5 });
    const hits = errorOutput(trajectory([outer, step('llm', { parentId: outer.id, at: 2, end: 3 }), lookup]), cfg);
    expect(hits.map((h) => [h.anchor, h.evidence.map((e) => e.spanId)])).toEqual([[lookup.id, [lookup.id, outer.id]]]);
  });

  it('…but not when something else happened inside it after that failure: the failure was handled', () => {
    const outer = step('agent', { name: 'invoke_agent', statusCode: 2, error: { source: 'status' }, at: 0, end: 10 });
    const lookup = failedTool('lookup_order', 'order service timed out after 30s', { parentId: outer.id, at: 1, end: 2 });
    const later = step('llm', { parentId: outer.id, at: 3, end: 4, statusCode: 1 });
    expect(errorOutput(trajectory([outer, lookup, later]), cfg).map((h) => h.anchor)).toEqual([outer.id, lookup.id]);
  });

  it('…nor when it names a type of its own', () => {
    const outer = step('agent', { name: 'invoke_agent', statusCode: 2, error: { source: 'error.type', type: 'MaxTurnsExceeded' }, at: 0, end: 10 });
    const lookup = failedTool('lookup_order', 'order service timed out after 30s', { parentId: outer.id, at: 1, end: 5 });
    expect(errorOutput(trajectory([outer, lookup]), cfg)).toHaveLength(2);
  });

  it('a placeholder error.type (`_OTHER`, `unknown`) names no type: the messageless wrapper still folds', () => {
    const outer = step('agent', { name: 'invoke_agent', statusCode: 2, attributes: { 'error.type': '_OTHER' }, at: 0, end: 10 });
    const lookup = failedTool('lookup_order', 'order service timed out after 30s', { parentId: outer.id, at: 1, end: 5 });
    expect(errorOutput(trajectory([outer, lookup]), cfg).map((h) => h.evidence.length)).toEqual([2]);
    const unknown = tool('x', { statusCode: 2, attributes: { 'error.type': 'unknown' } });
    expect(errorOutput(trajectory([unknown]), cfg).map((h) => h.detail)).toEqual(['tool "x" failed (status)']);
  });

  it('a failure in a sibling, or in a step that ended after it, is not a propagation', () => {
    const message = 'order service timed out after 30s';
    const run = agent('done', { at: 0, end: 100 });
    const step3 = step('other', { name: 'Step 3', parentId: run.id, at: 1, end: 10 });
    const lookup = failedTool('lookup_order', message, { parentId: step3.id, at: 2, end: 3 });
    const step4 = failedStep('other', 'Step 4', 'AgentError', `Error: ${message}`, { parentId: run.id, at: 11, end: 20 });
    const sibling = failedTool('lookup_order', message, { parentId: step3.id, at: 4, end: 5 });
    expect(errorOutput(trajectory([run, step3, lookup, sibling, step4]), cfg).map((h) => h.anchor)).toEqual([lookup.id, sibling.id, step4.id]);

    const outlived = failedStep('other', 'Step 5', 'AgentError', `Error: ${message}`, { parentId: run.id, at: 30, end: 31 });
    const background = failedTool('lookup_order', message, { parentId: outlived.id, at: 30, end: 35 });
    expect(errorOutput(trajectory([run, outlived, background]), cfg)).toHaveLength(2);
  });

  it('a step that did not fail between them does not hide the failure inside', () => {
    const message = 'order service timed out after 30s';
    const outer = failedStep('agent', 'workflow', 'WorkflowRuntimeError', `Error in step 'call_tool': ${message}`, { at: 0, end: 10 });
    const okWrapper = step('other', { name: 'call_tool', parentId: outer.id, statusCode: 1, at: 1, end: 9 });
    const lookup = failedTool('lookup_order', message, { parentId: okWrapper.id, at: 2, end: 3 });
    const hits = errorOutput(trajectory([outer, okWrapper, lookup]), cfg);
    expect(hits.map((h) => [h.anchor, h.evidence.map((e) => e.spanId)])).toEqual([[lookup.id, [lookup.id, outer.id]]]);
  });

  it('of two equal failures inside a step, the step repeats the one that ended last; the other stays its own', () => {
    const message = 'order service timed out after 30s';
    const outer = failedStep('other', 'Step 3', 'AgentToolExecutionError', `Error executing tool 'lookup_order': ${message}`, { at: 0, end: 10 });
    const first = failedTool('lookup_order', message, { parentId: outer.id, at: 1, end: 2 });
    const second = failedTool('lookup_order', message, { parentId: outer.id, at: 3, end: 4 });
    const hits = errorOutput(trajectory([outer, first, second]), cfg);
    expect(hits.map((h) => [h.anchor, h.evidence.length])).toEqual([
      [first.id, 1],
      [second.id, 2],
    ]);
  });

  it('a parent chain that loops back on itself is cut, not followed forever', () => {
    const a = failedStep('other', 'a', 'E', 'the same failure text, long enough', { id: 'c000000000000001', parentId: 'c000000000000002', at: 0, end: 10 });
    const b = failedStep('other', 'b', 'E', 'the same failure text, long enough', { id: 'c000000000000002', parentId: 'c000000000000001', at: 1, end: 10 });
    // Cut where the walk from the first step finds the loop: b becomes the root, a inside it.
    expect(errorOutput(trajectory([a, b]), cfg).map((h) => h.evidence.map((e) => e.spanId))).toEqual([[a.id, b.id]]);
  });
});
