import { describe, expect, it } from 'vitest';
import { readAnswer, readTask } from '../../src/checks/message-shape.ts';

const json = (v: unknown) => JSON.stringify(v);
const answer = (text: string) => ({ kind: 'answer', text });

describe('readAnswer: the answer to the user, by the shape of a captured output', () => {
  it('takes plain text, a JSON string and a structured final output as they are', () => {
    expect(readAnswer('The answer is 185')).toEqual(answer('The answer is 185'));
    expect(readAnswer('"Paris"')).toEqual(answer('Paris'));
    expect(readAnswer(json({ city: 'Paris', temp_c: 21 }))).toEqual(answer(json({ city: 'Paris', temp_c: 21 })));
    expect(readAnswer('   ')).toEqual({ kind: 'none', reason: 'empty' });
  });

  it('reads a LangGraph message state (OpenInference model_dump) as its last ai message, not the history', () => {
    const output = json({
      messages: [
        { content: 'How many rows?', type: 'human' },
        { content: '', type: 'ai', tool_calls: [{ name: 'q', args: {}, id: 'c1' }] },
        { content: 'Error: connection refused', type: 'tool', tool_call_id: 'c1', status: 'error' },
        { content: [{ type: 'text', text: 'There are 3 rows.' }], type: 'ai', tool_calls: [] },
      ],
    });
    expect(readAnswer(output)).toEqual(answer('There are 3 rows.'));
  });

  it('reads LangChain serialized messages ({lc, id, kwargs})', () => {
    const ai = { lc: 1, type: 'constructor', id: ['langchain', 'schema', 'messages', 'AIMessage'], kwargs: { content: 'Done.', type: 'ai' } };
    expect(readAnswer(json({ messages: [ai] }))).toEqual(answer('Done.'));
  });

  it('is no answer when the conversation ends in a tool call or a tool message', () => {
    expect(readAnswer(json({ messages: [{ type: 'ai', content: '', tool_calls: [{ name: 'q', id: 'c' }] }] }))).toEqual({
      kind: 'none',
      reason: 'tool-calls-pending',
    });
    expect(
      readAnswer(
        json({
          messages: [
            { type: 'human', content: 'q' },
            { type: 'tool', content: 'Error: x' },
          ],
        }),
      ),
    ).toEqual({
      kind: 'none',
      reason: 'no-final-assistant-message',
    });
  });

  it('reads GenAI output messages as the text parts of the last assistant message', () => {
    const out = [
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'thinking' },
          { type: 'text', content: 'Sunny.' },
        ],
        finish_reason: 'stop',
      },
    ];
    expect(readAnswer(json(out))).toEqual(answer('Sunny.'));
    const calls = [{ role: 'assistant', parts: [{ type: 'tool_call', id: 'c', name: 'get_weather', arguments: {} }] }];
    expect(readAnswer(json(calls))).toEqual({ kind: 'none', reason: 'tool-calls-pending' });
  });

  it('reads an OpenAI chat completion, a LangChain LLM result and an OpenAI Responses object', () => {
    expect(readAnswer(json({ id: 'x', choices: [{ message: { role: 'assistant', content: 'Hi.' } }] }))).toEqual(answer('Hi.'));
    expect(readAnswer(json({ choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'c' }] } }] }))).toEqual({
      kind: 'none',
      reason: 'tool-calls-pending',
    });
    expect(readAnswer(json({ generations: [[{ text: 'Gen text.', message: { type: 'ai', content: 'Gen text.' } }]] }))).toEqual(answer('Gen text.'));
    const responses = { output: [{ type: 'reasoning' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] }] };
    expect(readAnswer(json(responses))).toEqual(answer('Done.'));
    expect(readAnswer(json({ output: [...responses.output, { type: 'function_call', name: 'f' }] }))).toEqual({ kind: 'none', reason: 'tool-calls-pending' });
  });
});

describe('readTask: what an input hands to an agent', () => {
  it('is the text itself, or the last user message of a conversation, never the replayed rest', () => {
    expect(readTask('Write the report')).toBe('Write the report');
    const convo = json([
      { role: 'user', content: 'Find it' },
      { role: 'assistant', content: '...' },
      { role: 'tool', content: 'Error: x' },
    ]);
    expect(readTask(convo)).toBe('Find it');
    expect(readTask(json({ messages: [{ type: 'tool', content: 'Error: x' }] }))).toBeUndefined();
  });
});

describe('readAnswer: framework message shapes beyond the conventions', () => {
  it('reads LlamaIndex ChatMessage blocks and its AgentOutput wrapper', () => {
    const response = { role: 'assistant', additional_kwargs: {}, blocks: [{ block_type: 'text', text: 'Sunny in Paris.' }] };
    expect(readAnswer(json({ response, tool_calls: [], raw: { id: 'x' }, current_agent_name: 'Agent' }))).toEqual(answer('Sunny in Paris.'));
    expect(readAnswer(json({ response, tool_calls: [{ tool_name: 'get_weather', tool_kwargs: {} }] }))).toEqual({
      kind: 'none',
      reason: 'tool-calls-pending',
    });
  });

  it('reads Bedrock (Strands) and Gemini content parts, tool requests included', () => {
    expect(readAnswer(json([{ role: 'assistant', content: [{ text: 'Done.' }] }]))).toEqual(answer('Done.'));
    expect(readAnswer(json([{ role: 'assistant', content: [{ text: 'Checking.' }, { toolUse: { name: 'x', input: {} } }] }]))).toEqual({
      kind: 'none',
      reason: 'tool-calls-pending',
    });
    expect(readAnswer(json({ role: 'model', parts: [{ functionCall: { name: 'x', args: {} } }] }))).toEqual({ kind: 'none', reason: 'tool-calls-pending' });
  });
});

describe('readAnswer: shapes seen in the framework captures', () => {
  it('reads LangGraph (Python) state messages in the {type, data} form', () => {
    const output = json({
      messages: [
        { type: 'human', data: { content: 'Look up order 42', type: 'human' } },
        { type: 'tool', data: { content: 'OrderServiceUnavailable: order service timed out', type: 'tool', status: 'error' } },
        { type: 'ai', data: { content: 'I could not look up order 42 right now.', type: 'ai', tool_calls: [], invalid_tool_calls: [] } },
      ],
    });
    expect(readAnswer(output)).toEqual(answer('I could not look up order 42 right now.'));
  });

  it('finds the messages inside a LangGraph.js Command update, never answering with the whole state', () => {
    const ai = { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'AIMessage'], kwargs: { content: 'Done.', tool_calls: [] } };
    expect(readAnswer(json({ output: [{ lg_name: 'Command', update: { messages: [ai] } }] }))).toEqual(answer('Done.'));
  });

  it('takes a Vercel AI SDK tool-call list for a request, and lets a finish reason decide an aggregated message', () => {
    expect(readAnswer(json([{ toolCallId: 'c1', toolName: 'get_weather', input: '{}' }]))).toEqual({ kind: 'none', reason: 'tool-calls-pending' });
    const aggregated = [
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Sunny; the order lookup failed.' },
          { type: 'tool_call', id: 'c1', name: 'get_weather', arguments: {} },
          { type: 'tool_call_response', id: 'c1', response: 'sunny' },
        ],
        finish_reason: 'stop',
      },
    ];
    expect(readAnswer(json(aggregated))).toEqual(answer('Sunny; the order lookup failed.'));
    expect(readAnswer(json([{ role: 'assistant', parts: [{ type: 'text', content: 'Let me check.' }], finish_reason: 'tool_call' }]))).toEqual({
      kind: 'none',
      reason: 'tool-calls-pending',
    });
  });
});

describe("readAnswer: result objects that list the run's steps beside the answer", () => {
  it('takes the answer field, not the intermediate steps or task outputs next to it', () => {
    const executor = { output: 'The order ships tomorrow.', intermediate_steps: [[{ tool: 'lookup_order' }, 'Error: order service timed out']] };
    expect(readAnswer(json(executor))).toEqual(answer('The order ships tomorrow.'));
    const crew = { raw: 'Report done.', pydantic: null, json_dict: null, tasks_output: [{ raw: 'Error: order service timed out' }] };
    expect(readAnswer(json(crew))).toEqual(answer('Report done.'));
    expect(readAnswer(json({ text: 'Hi.', files: [] }))).toEqual(answer('Hi.'));
  });
});

describe('readTask: nested inputs', () => {
  it('finds the conversation inside an llm input of message lists ({"messages": [[...]]})', () => {
    const input = json({
      messages: [
        [
          { type: 'human', data: { content: 'Summarize the report', type: 'human' } },
          { type: 'tool', data: { content: 'Error: x', type: 'tool' } },
        ],
      ],
    });
    expect(readTask(input)).toBe('Summarize the report');
  });
});
