import { describe, expect, it } from 'vitest';
import { defaultChecksConfig, parseChecksConfig } from '../../src/checks/config.ts';
import { errorOutput } from '../../src/checks/error-output.ts';
import { agent, failedTool, step, tool, trajectory } from './builders.ts';

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
