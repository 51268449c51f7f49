/**
 * The stand-in model (a stand-in for an LLM endpoint, which cannot run here) driven by the
 * real `openai` client, plainly and streaming, over Chat Completions and Responses: the
 * script every framework scenario relies on.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chatEntries,
  FINAL_1,
  FINAL_2,
  nextMove,
  ORDER_ERROR_MESSAGE,
  type StandInModel,
  startStandInModel,
  TURN_1,
  TURN_2,
  WEATHER_TEXT,
} from './stand-in-model.ts';

let model: StandInModel;
let client: OpenAI;
beforeAll(async () => {
  model = await startStandInModel();
  client = new OpenAI({ baseURL: model.baseUrl, apiKey: 'not-a-key' });
});
afterAll(async () => {
  await model.close();
});

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

async function chatTurn(history: Msg[], stream: boolean): Promise<{ calls: string[]; text: string }> {
  const calls: string[] = [];
  for (let i = 0; i < 10; i++) {
    let message: { content: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[] };
    if (stream) {
      const s = await client.chat.completions.create({ model: 'm', messages: history, stream: true, stream_options: { include_usage: true } });
      const acc: { content: string; tool_calls: { id: string; function: { name: string; arguments: string } }[] } = { content: '', tool_calls: [] };
      for await (const chunk of s) {
        const d = chunk.choices[0]?.delta;
        if (d === undefined) continue;
        acc.content += d.content ?? '';
        for (const tc of d.tool_calls ?? []) {
          acc.tool_calls[tc.index] ??= { id: '', function: { name: '', arguments: '' } };
          const t = acc.tool_calls[tc.index]!;
          t.id += tc.id ?? '';
          t.function.name += tc.function?.name ?? '';
          t.function.arguments += tc.function?.arguments ?? '';
        }
      }
      message = { content: acc.content, tool_calls: acc.tool_calls.length > 0 ? acc.tool_calls : undefined };
    } else {
      const r = await client.chat.completions.create({ model: 'm', messages: history });
      message = r.choices[0]!.message as typeof message;
    }
    if (message.tool_calls === undefined || message.tool_calls.length === 0) {
      history.push({ role: 'assistant', content: message.content });
      return { calls, text: message.content ?? '' };
    }
    history.push({ role: 'assistant', content: null, tool_calls: message.tool_calls.map((t) => ({ ...t, type: 'function' as const })) });
    for (const t of message.tool_calls) {
      calls.push(`${t.function.name} ${t.function.arguments}`);
      history.push({ role: 'tool', tool_call_id: t.id, content: t.function.name === 'get_weather' ? WEATHER_TEXT : 'Error: failed' });
    }
  }
  throw new Error('no final answer in 10 requests');
}

describe('the stand-in model', () => {
  for (const stream of [false, true]) {
    it(`plays the two-turn script over Chat Completions${stream ? ', streaming' : ''}`, async () => {
      const history: Msg[] = [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: TURN_1 },
      ];
      expect(await chatTurn(history, stream)).toEqual({
        calls: ['get_weather {"city":"Paris"}', 'get_weather {"city":"Paris"}', 'lookup_order {"order_id":"42"}'],
        text: FINAL_1,
      });
      history.push({ role: 'user', content: TURN_2 });
      expect(await chatTurn(history, stream)).toEqual({ calls: ['get_weather {"city":"Rome"}'], text: FINAL_2 });
    });
  }

  it('ends with a final_answer call when the request offers that tool', async () => {
    const r = await client.chat.completions.create({
      model: 'm',
      messages: [
        { role: 'user', content: TURN_2 },
        { role: 'user', content: `Observation: ${WEATHER_TEXT}` },
      ],
      tools: [{ type: 'function', function: { name: 'final_answer', parameters: {} } }],
    });
    expect(r.choices[0]!.message.tool_calls![0]).toMatchObject({ function: { name: 'final_answer', arguments: JSON.stringify({ answer: FINAL_2 }) } });
  });

  for (const stream of [false, true]) {
    it(`plays turn 1 over the Responses API${stream ? ', streaming' : ''}`, async () => {
      const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: TURN_1 }];
      const calls: string[] = [];
      for (;;) {
        const r = stream
          ? await (async () => {
              const s = await client.responses.create({ model: 'm', input, stream: true });
              for await (const e of s) if (e.type === 'response.completed') return e.response;
              throw new Error('no response.completed');
            })()
          : await client.responses.create({ model: 'm', input });
        const item = r.output[0]!;
        if (item.type !== 'function_call') {
          expect(item).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: FINAL_1 }] });
          break;
        }
        calls.push(`${item.name} ${item.arguments}`);
        input.push({ type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments });
        input.push({ type: 'function_call_output', call_id: item.call_id, output: WEATHER_TEXT });
      }
      expect(calls).toEqual(['get_weather {"city":"Paris"}', 'get_weather {"city":"Paris"}', 'lookup_order {"order_id":"42"}']);
    });
  }
});

describe('the stand-in model reading observations folded into one message', () => {
  it('counts each tool text as a result, as smolagents folds a failed call into the previous observation', () => {
    const entries = chatEntries([
      { role: 'user', content: `New task:\n${TURN_1}` },
      { role: 'assistant', content: 'Calling tools: get_weather' },
      { role: 'user', content: `Observation:\n${WEATHER_TEXT}` },
      { role: 'assistant', content: 'Calling tools: get_weather' },
      { role: 'user', content: `Observation:\n${WEATHER_TEXT}\nError:\nOrderServiceUnavailable: ${ORDER_ERROR_MESSAGE}` },
    ]);
    expect(nextMove(entries)).toEqual({ kind: 'text', text: FINAL_1 });
  });
});
