import { describe, expect, it } from 'vitest';

// The page's event reader (a plain browser module, no build step) over the message shapes the
// conventions trajwatch reads carry. Imported by URL: it is JavaScript the browser loads as is.
interface Message {
  role: string;
  text: string;
  toolCalls: { name: string; arguments: string }[];
}
interface EventView {
  kind: string;
  title: string;
  status: string;
  sections: { label: string; text?: string; messages?: Message[] }[];
  raw: string;
}
const { eventView } = (await import(new URL('../../../src/calibration/label/static/event-view.js', import.meta.url).href)) as {
  eventView: (content: string) => EventView;
};

const content = (o: Record<string, unknown>) => JSON.stringify(o);

describe('eventView: an event as a person reads it', () => {
  it('reads GenAI parts, Vercel AI tool-call parts and Anthropic tool_use as text and tool calls, arguments pretty-printed', () => {
    const genai = eventView(
      content({
        step: 'llm',
        name: 'chat',
        status: 'ok',
        input: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }]),
        result: JSON.stringify([{ role: 'assistant', parts: [{ type: 'tool_call', name: 'search', arguments: { q: 'x' } }] }]),
      }),
    );
    expect(genai.sections.map((s) => s.label)).toEqual(['messages in', 'output']);
    expect(genai.sections[0]!.messages).toEqual([{ role: 'user', text: 'hi', toolCalls: [] }]);
    expect(genai.sections[1]!.messages![0]!.toolCalls).toEqual([{ name: 'search', arguments: '{\n  "q": "x"\n}' }]);
    const vercel = eventView(
      content({
        step: 'llm',
        name: 'ai.generateText',
        status: 'ok',
        input: JSON.stringify({
          messages: [
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'on it' },
                { type: 'tool-call', toolName: 'fetch', args: { url: 'u' } },
              ],
            },
            { role: 'tool', content: [{ type: 'tool-result', toolName: 'fetch', result: 'page' }] },
          ],
        }),
      }),
    );
    expect(vercel.sections[0]!.messages).toEqual([
      { role: 'assistant', text: 'on it', toolCalls: [{ name: 'fetch', arguments: '{\n  "url": "u"\n}' }] },
      { role: 'tool', text: 'result of fetch: page', toolCalls: [] },
    ]);
    const anthropic = eventView(
      content({
        step: 'llm',
        name: 'messages',
        status: 'ok',
        result: JSON.stringify({ role: 'assistant', content: [{ type: 'tool_use', name: 'ls', input: { path: '/' } }] }),
      }),
    );
    expect(anthropic.sections[0]!.messages![0]!.toolCalls).toEqual([{ name: 'ls', arguments: '{\n  "path": "/"\n}' }]);
  });

  it('reads a tool step as name, arguments, result or error; plain text stays text; content that is not JSON is shown raw', () => {
    const tool = eventView(
      content({
        step: 'tool',
        name: 'execute_tool',
        status: 'error',
        tool: 'rm',
        args: { path: '/tmp/x' },
        error: { source: 'exception', type: 'EACCES', message: 'denied' },
      }),
    );
    expect(tool).toMatchObject({ kind: 'tool', title: 'tool rm', status: 'error' });
    expect(tool.sections).toEqual([
      { label: 'arguments', text: '{\n  "path": "/tmp/x"\n}', pre: true },
      { label: 'error', text: 'EACCES: denied', pre: true },
    ]);
    const agent = eventView(content({ step: 'agent', name: 'invoke_agent', status: 'ok', agent: 'worker', input: 'do the task', result: '{"done":true}' }));
    expect(agent.title).toBe('agent · agent worker');
    expect(agent.sections).toEqual([
      { label: 'input', text: 'do the task', pre: true },
      { label: 'result', text: '{\n  "done": true\n}', pre: true },
    ]);
    expect(eventView('not json {')).toMatchObject({ kind: 'text', raw: 'not json {', sections: [{ label: 'content', text: 'not json {' }] });
  });
});
