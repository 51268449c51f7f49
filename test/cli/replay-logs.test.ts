import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const TRACE = '5b8efff798038103d269b633813fc60c';
const str = (stringValue: string) => ({ stringValue });

describe('trajwatch replay with recorded OTLP/JSON logs', () => {
  it('joins the content events of a logs file (given first, as the exporters usually deliver) to the steps of the traces file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-replay-logs-'));
    const logs = join(dir, 'logs.jsonl');
    const traces = join(dir, 'traces.json');
    const out = join(dir, 'trajectories.jsonl');
    // The Collector's file exporter: one ExportLogsServiceRequest per line.
    const record = (spanId: string, id: string) => ({
      timeUnixNano: '1700000000500000000',
      traceId: TRACE,
      spanId,
      eventName: 'gen_ai.tool.message',
      body: {
        kvlistValue: {
          values: [
            { key: 'content', value: str('{"q":"otel"}') },
            { key: 'id', value: str(id) },
          ],
        },
      },
    });
    const logsLine = (spanId: string, id: string) => JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [record(spanId, id)] }] }] });
    await writeFile(logs, `${logsLine('bbbbbbbbbbbbbbbb', 'c1')}\n${logsLine('cccccccccccccccc', 'c2')}\n`);
    const tool = (spanId: string) => ({
      traceId: TRACE,
      spanId,
      parentSpanId: 'aaaaaaaaaaaaaaaa',
      name: 'execute_tool search',
      startTimeUnixNano: '1700000000100000000',
      endTimeUnixNano: '1700000000900000000',
      attributes: [
        { key: 'gen_ai.operation.name', value: str('execute_tool') },
        { key: 'gen_ai.tool.name', value: str('search') },
      ],
    });
    const root = { traceId: TRACE, spanId: 'aaaaaaaaaaaaaaaa', name: 'root', startTimeUnixNano: '1700000000000000000', endTimeUnixNano: '1700000001000000000' };
    await writeFile(traces, JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [root, tool('bbbbbbbbbbbbbbbb'), tool('cccccccccccccccc')] }] }] }));

    const { code, stderr } = await runCli(['replay', logs, traces, '--trajectories', out]);
    expect(stderr).toBe(`replay: done: 2/2 files, 3 spans (0 rejected), 1 trajectories, 1 findings; trajectories written to ${out}\n`);
    expect(code).toBe(0);
    const [t] = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(t.complete).toBe(true);
    const tools = t.steps.filter((s: { kind: string }) => s.kind === 'tool');
    expect(tools.map((s: { toolCallId: string; args: { parsed: unknown } }) => [s.toolCallId, s.args.parsed])).toEqual([
      ['c1', { q: 'otel' }],
      ['c2', { q: 'otel' }],
    ]);
  });
});
