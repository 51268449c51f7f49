import { at, toolArgs, traj } from '../../windows/builders.ts';

// A trajectory with every kind of event a window page reads: an agent root, an LLM step whose
// input is chat messages and whose output asks for a tool, the tool, a failing tool, long logs.

export const MESSAGES = JSON.stringify([
  { role: 'system', content: 'You are a careful agent.' },
  { role: 'user', content: 'Book the "blue" room for Friday.\nThen confirm.' },
]);
const OUTPUT = JSON.stringify([
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'book_room', arguments: '{"room":"blue","day":"friday"}' } }],
  },
]);
const LONG = Array.from({ length: 80 }, (_, i) => `line ${i} of the booking system's log`).join('\n');

/** An agent root, an LLM step asking for a tool, the tool (its result claims done or not), a failing tool, and a long lookup. */
export function booking(key: string, done: boolean) {
  const root = at(1, {
    kind: 'agent',
    name: 'invoke_agent',
    agentName: 'booker',
    input: 'book a room',
    endTimeUnixNano: at(1).startTimeUnixNano + 1_000_000_000n,
  });
  return {
    ...traj([
      root,
      at(2, { parentId: root.id, kind: 'llm', name: 'chat gpt-4o', model: 'gpt-4o', input: MESSAGES, result: OUTPUT }),
      at(3, {
        parentId: root.id,
        toolName: 'book_room',
        args: toolArgs('{"room":"blue","day":"friday"}'),
        result: done ? 'booked, all done, claims done' : 'still working',
      }),
      at(4, {
        parentId: root.id,
        toolName: 'notify',
        args: toolArgs('{"to":"ops"}'),
        statusCode: 2,
        error: { source: 'exception', type: 'TimeoutError', message: 'notify timed out after 30 s' },
      }),
      ...[5, 6, 7].map((n) => at(n, { parentId: root.id, toolName: 'read_log', args: toolArgs(`{"n":${n}}`), result: LONG })),
    ]),
    key,
  };
}
