/**
 * One contract, run against every convention mapper with a table of spans per convention:
 * the mapper claims its spans, the ordered normalizer picks it, every step copies the span's
 * identity and provenance, the convention's facts land in the right fields, and facts the
 * span does not carry stay absent (no key at all, never "").
 */
import { describe, expect, it } from 'vitest';
import type { Span } from '../../src/ingest/span.ts';
import { argsDigest, jsonDigest, textDigest } from '../../src/normalize/args-digest.ts';
import { readRecordedCall } from '../../src/normalize/recorded-call.ts';
import { applyContentEvents } from '../../src/normalize/content-events.ts';
import type { ConventionMapper } from '../../src/normalize/mapper.ts';
import { MAPPERS, normalizeSpan, selectMapper } from '../../src/normalize/normalize.ts';
import { SESSION_ID_KEYS } from '../../src/normalize/session.ts';
import type { Step } from '../../src/normalize/step.ts';
import { exceptionEvent, makeSpan } from './make-span.ts';

interface ContractCase {
  title: string;
  span: Span;
  /** Exact values of the facts this case is about. */
  expected: Partial<Step>;
  /** Facts the span does not carry: the step must have no such key. */
  absent: (keyof Step)[];
}

const OPTIONAL_FACTS = [
  'parentId',
  'toolName',
  'toolCallId',
  'args',
  'result',
  'input',
  'error',
  'model',
  'agentName',
  'sessionId',
  'toolSchemas',
  'requestedToolCalls',
  'service',
] as const satisfies readonly (keyof Step)[];

const weatherSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

const CASES: Record<string, ContractCase[]> = {
  langfuse: [
    {
      title: '@observe(as_type="tool") with a recorded keyword call, its output and the propagated session',
      span: makeSpan({
        name: 'get_weather',
        attributes: {
          'langfuse.observation.type': 'tool',
          'langfuse.observation.input': '{"args": [], "kwargs": {"city": "Paris"}}',
          'langfuse.observation.output': 'Sunny',
          'session.id': 'conv-7',
        },
      }),
      expected: {
        kind: 'tool',
        toolName: 'get_weather',
        args: { raw: '{"args": [], "kwargs": {"city": "Paris"}}', parsed: { city: 'Paris' }, recorded: 'kwargs', digest: jsonDigest({ city: 'Paris' }) },
        result: 'Sunny',
        sessionId: 'conv-7',
      },
      absent: ['toolCallId', 'error', 'model', 'input', 'agentName'],
    },
    {
      title: 'a tool that raised: level ERROR with the OTel status the SDK sets, no output',
      span: makeSpan({
        name: 'lookup_order',
        status: { code: 2, message: 'order service timed out after 30s' },
        attributes: {
          'langfuse.observation.type': 'tool',
          'langfuse.observation.input': '{"args": [], "kwargs": {"order_id": "42"}}',
          'langfuse.observation.level': 'ERROR',
          'langfuse.observation.status_message': 'order service timed out after 30s',
        },
      }),
      expected: { kind: 'tool', toolName: 'lookup_order', error: { source: 'status', message: 'order service timed out after 30s' }, statusCode: 2 },
      absent: ['result', 'toolCallId', 'sessionId'],
    },
    {
      title: 'a generation with its model, input messages and output',
      span: makeSpan({
        name: 'OpenAI-generation',
        attributes: {
          'langfuse.observation.type': 'generation',
          'langfuse.observation.model.name': 'gpt-4o-mini',
          'langfuse.observation.input': '[{"role": "user", "content": "weather?"}]',
          'langfuse.observation.output': '{"role": "assistant", "content": "sunny"}',
        },
      }),
      expected: { kind: 'llm', model: 'gpt-4o-mini', input: '[{"role": "user", "content": "weather?"}]', result: '{"role": "assistant", "content": "sunny"}' },
      absent: ['toolName', 'args', 'agentName', 'requestedToolCalls'],
    },
    {
      title: 'an agent observation named by its span, and a plain span that is other',
      span: makeSpan({
        name: 'weather_turn',
        attributes: { 'langfuse.observation.type': 'agent', 'langfuse.observation.input': '{"args": ["Paris?"], "kwargs": {}}' },
      }),
      expected: { kind: 'agent', agentName: 'weather_turn', input: '{"args": ["Paris?"], "kwargs": {}}' },
      absent: ['toolName', 'args', 'result', 'model'],
    },
    {
      title: 'a span-type observation is other',
      span: makeSpan({ name: 'prepare', attributes: { 'langfuse.observation.type': 'span' } }),
      expected: { kind: 'other' },
      absent: ['toolName', 'args', 'result', 'input', 'agentName'],
    },
  ],
  genai: [
    {
      title: 'execute_tool with JSON-string args, result, call id, conversation and agent',
      span: makeSpan({
        name: 'execute_tool get_weather',
        status: { code: 1 },
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'get_weather',
          'gen_ai.tool.call.id': 'call_1',
          'gen_ai.tool.call.arguments': '{"unit": "c", "city": "Paris"}',
          'gen_ai.tool.call.result': '{"temp":21}',
          'gen_ai.conversation.id': 'conv-1',
          'gen_ai.agent.name': 'planner',
        },
      }),
      expected: {
        kind: 'tool',
        toolName: 'get_weather',
        toolCallId: 'call_1',
        args: {
          raw: '{"unit": "c", "city": "Paris"}',
          parsed: { unit: 'c', city: 'Paris' },
          digest: jsonDigest({ city: 'Paris', unit: 'c' }),
          declared: 'json',
        },
        result: '{"temp":21}',
        sessionId: 'conv-1',
        agentName: 'planner',
      },
      absent: ['error', 'model', 'input', 'toolSchemas'],
    },
    {
      title: 'execute_tool with structured args, error.type and no result',
      span: makeSpan({
        name: 'execute_tool search',
        status: { code: 2, message: 'upstream 503' },
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'search',
          'gen_ai.tool.call.arguments': { query: 'otel', limit: 3 },
          'error.type': 'tool_error',
        },
      }),
      expected: {
        kind: 'tool',
        toolName: 'search',
        args: { raw: '{"query":"otel","limit":3}', parsed: { query: 'otel', limit: 3 }, digest: jsonDigest({ limit: 3, query: 'otel' }), declared: 'json' },
        error: { source: 'error.type', type: 'tool_error', message: 'upstream 503' },
        statusCode: 2,
      },
      absent: ['result', 'toolCallId', 'sessionId', 'agentName'],
    },
    {
      title: 'chat with models, input/output messages and tool definitions',
      span: makeSpan({
        name: 'chat gpt-4o',
        kind: 3,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.response.model': 'gpt-4o-2024-08-06',
          'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"weather?"}]}]',
          'gen_ai.output.messages': [{ role: 'assistant', parts: [{ type: 'text', content: 'sunny' }] }],
          'gen_ai.tool.definitions': JSON.stringify([{ type: 'function', name: 'get_weather', parameters: weatherSchema }]),
        },
      }),
      expected: {
        kind: 'llm',
        model: 'gpt-4o-2024-08-06',
        input: '[{"role":"user","parts":[{"type":"text","content":"weather?"}]}]',
        result: '[{"role":"assistant","parts":[{"type":"text","content":"sunny"}]}]',
        toolSchemas: { get_weather: weatherSchema },
      },
      absent: ['toolName', 'toolCallId', 'args', 'error'],
    },
    {
      title: 'chat with messages only on the operation-details event, request model only',
      span: makeSpan({
        name: 'chat',
        attributes: { 'gen_ai.operation.name': 'generate_content', 'gen_ai.request.model': 'gemini-2.5' },
        events: [
          {
            name: 'gen_ai.client.inference.operation.details',
            timeUnixNano: 1_700_000_001_000_000_000n,
            attributes: { 'gen_ai.input.messages': '[{"role":"user","parts":[]}]' },
          },
        ],
      }),
      expected: { kind: 'llm', model: 'gemini-2.5', input: '[{"role":"user","parts":[]}]', eventNames: ['gen_ai.client.inference.operation.details'] },
      absent: ['result', 'toolSchemas', 'error'],
    },
    {
      title: 'invoke_agent failing with an exception event',
      span: makeSpan({
        name: 'invoke_agent planner',
        status: { code: 2, message: 'ValueError: bad plan' },
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner', 'error.type': 'ValueError' },
        events: [exceptionEvent({ 'exception.type': 'ValueError', 'exception.message': 'bad plan' })],
      }),
      expected: { kind: 'agent', agentName: 'planner', error: { source: 'exception', type: 'ValueError', message: 'bad plan' }, eventNames: ['exception'] },
      absent: ['result', 'input', 'model'],
    },
    {
      // AutoGen AgentChat makes this span in the agent's constructor, often before (and outside)
      // any run: creating an agent runs nothing, so it is no agent step (an agent run).
      title: 'create_agent (AutoGen, at construction) is other, its agent name kept',
      span: makeSpan({
        name: 'create_agent weather_assistant',
        kind: 3,
        attributes: {
          'gen_ai.operation.name': 'create_agent',
          'gen_ai.system': 'autogen',
          'gen_ai.agent.name': 'weather_assistant',
          'gen_ai.agent.description': 'An agent that provides assistance with ability to use tools.',
        },
      }),
      expected: { kind: 'other', agentName: 'weather_assistant' },
      absent: ['error', 'toolName', 'input', 'result', 'model'],
    },
    {
      title: 'embeddings is a retrieval step',
      span: makeSpan({ attributes: { 'gen_ai.operation.name': 'embeddings', 'gen_ai.request.model': 'text-embedding-3' } }),
      expected: { kind: 'retrieval', model: 'text-embedding-3' },
      absent: ['error', 'result'],
    },
    {
      title: 'an operation outside the table (AI SDK 7 agent_step) is other',
      span: makeSpan({ name: 'agent_step', attributes: { 'gen_ai.operation.name': 'agent_step', 'ai.operationId': 'agent_step' } }),
      expected: { kind: 'other' },
      absent: ['error', 'toolName'],
    },
  ],

  openinference: [
    {
      title: 'smolagents TOOL: args kept as captured and parsed, tool.parameters as schema',
      span: makeSpan({
        name: 'FinalAnswerTool',
        status: { code: 1 },
        attributes: {
          'openinference.span.kind': 'TOOL',
          'tool.name': 'final_answer',
          'tool.description': 'Provides a final answer.',
          'tool.parameters': '{"answer": {"type": "any", "description": "The final answer"}}',
          'input.value': '{"args": ["42"], "sanitize_inputs_outputs": false, "kwargs": {}}',
          'output.value': '42',
        },
      }),
      expected: {
        kind: 'tool',
        toolName: 'final_answer',
        args: {
          raw: '{"args": ["42"], "sanitize_inputs_outputs": false, "kwargs": {}}',
          parsed: { args: ['42'], sanitize_inputs_outputs: false, kwargs: {} },
          digest: jsonDigest({ args: ['42'], kwargs: {}, sanitize_inputs_outputs: false }),
          declared: 'text',
        },
        result: '42',
        toolSchemas: { final_answer: { answer: { type: 'any', description: 'The final answer' } } },
      },
      absent: ['toolCallId', 'error', 'input', 'model', 'sessionId'],
    },
    {
      title: 'failed TOOL: status 2 plus an exception event without a type',
      span: makeSpan({
        name: 'TextInspectorTool',
        status: { code: 2, message: 'UnsupportedFormatException: cannot convert' },
        attributes: {
          'openinference.span.kind': 'TOOL',
          'tool.name': 'inspect_file_as_text',
          'input.value': '{"args": [], "sanitize_inputs_outputs": false, "kwargs": {"file_path": "a.jsonld", "question": null}}',
        },
        events: [exceptionEvent({ 'exception.message': 'cannot convert', 'exception.escaped': 'False' })],
      }),
      expected: { kind: 'tool', toolName: 'inspect_file_as_text', error: { source: 'exception', message: 'cannot convert' } },
      absent: ['result', 'toolSchemas'],
    },
    {
      title: 'LLM with model, session, input/output and llm.tools schemas',
      span: makeSpan({
        name: 'LiteLLMModel.__call__',
        attributes: {
          'openinference.span.kind': 'LLM',
          'llm.model_name': 'o3-mini',
          'session.id': 'sess-9',
          'input.value': '{"messages": []}',
          'output.value': '{"role": "assistant", "content": "hi"}',
          'llm.token_count.total': 42,
          'llm.tools.0.tool.json_schema': JSON.stringify({ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }),
          'llm.tools.1.tool.json_schema': '{"type": "function", "function": {"name": "final_answer", "parameters": {"type": "object"}}}',
        },
      }),
      expected: {
        kind: 'llm',
        model: 'o3-mini',
        sessionId: 'sess-9',
        input: '{"messages": []}',
        result: '{"role": "assistant", "content": "hi"}',
        toolSchemas: { get_weather: weatherSchema, final_answer: { type: 'object' } },
      },
      absent: ['toolName', 'args', 'error'],
    },
    {
      title: 'LlamaIndex LLM span that made no request (OpenAI._prepare_chat_with_tools): other, tool definitions still read',
      span: makeSpan({
        name: 'OpenAI._prepare_chat_with_tools',
        attributes: {
          'openinference.span.kind': 'LLM',
          'llm.model_name': 'gpt-4o-mini',
          'llm.provider': 'openai',
          'llm.invocation_parameters': '{"context_window":128000,"is_chat_model":true}',
          'input.value': '{"tools": ["<FunctionTool object>"], "user_msg": "weather?"}',
          'input.mime_type': 'application/json',
          'output.value': '{"messages": ["ChatMessage(role=user)"], "tools": []}',
          'llm.tools.0.tool.json_schema': JSON.stringify({ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }),
        },
      }),
      expected: { kind: 'other', model: 'gpt-4o-mini', toolSchemas: { get_weather: weatherSchema } },
      // its input is the model's prompt being prepared: not read as a step input
      absent: ['toolName', 'args', 'error', 'requestedToolCalls', 'input'],
    },
    {
      title: 'LlamaIndex request span (OpenAI.astream_chat): llm, with its requested tool call',
      span: makeSpan({
        name: 'OpenAI.astream_chat',
        attributes: {
          'openinference.span.kind': 'LLM',
          'llm.model_name': 'gpt-4o-mini',
          'llm.input_messages.0.message.role': 'user',
          'llm.input_messages.0.message.content': 'weather?',
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_paris_1',
          'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
          'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city":"Paris"}',
          'llm.finish_reason': 'tool_calls',
          'output.value': 'assistant: ',
        },
      }),
      expected: {
        kind: 'llm',
        model: 'gpt-4o-mini',
        requestedToolCalls: [{ id: 'call_paris_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
        result: 'assistant: ',
      },
      absent: ['toolName', 'args', 'error', 'toolSchemas'],
    },
    {
      title: 'AGENT with agent.name and input',
      span: makeSpan({
        name: 'CodeAgent.run',
        attributes: { 'openinference.span.kind': 'AGENT', 'agent.name': 'search_agent', 'input.value': '{"task": "find"}' },
      }),
      expected: { kind: 'agent', agentName: 'search_agent', input: '{"task": "find"}' },
      absent: ['result', 'model', 'args'],
    },
    {
      title: 'CHAIN (smolagents step) is other and keeps its exception',
      span: makeSpan({
        name: 'Step 3',
        status: { code: 2, message: 'AgentExecutionError: Code execution failed' },
        attributes: { 'openinference.span.kind': 'CHAIN', 'input.value': '{"memory_step": "ActionStep(...)"}' },
        events: [exceptionEvent({ 'exception.message': 'Code execution failed' })],
      }),
      expected: { kind: 'other', error: { source: 'exception', message: 'Code execution failed' } },
      absent: ['result', 'toolName', 'args'],
    },
    {
      title: 'TOOL whose input.mime_type is application/json: args declared JSON',
      span: makeSpan({
        attributes: {
          'openinference.span.kind': 'TOOL',
          'tool.name': 'get_weather',
          'input.value': '{"city": "Paris"}',
          'input.mime_type': 'application/json',
        },
      }),
      expected: { kind: 'tool', args: { raw: '{"city": "Paris"}', parsed: { city: 'Paris' }, digest: jsonDigest({ city: 'Paris' }), declared: 'json' } },
      absent: ['result', 'toolSchemas', 'toolCallId'],
    },
    {
      title: 'LangGraph TOOL with a bare-string input and no mime type: text, as OpenInference specifies',
      span: makeSpan({ attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'input.value': 'Paris', 'output.value': 'sunny' } }),
      expected: { kind: 'tool', args: { raw: 'Paris', digest: textDigest('Paris'), declared: 'text' }, result: 'sunny' },
      absent: ['toolSchemas', 'toolCallId'],
    },
    {
      title: 'TOOL with tool_call.id and non-JSON input: raw text, no parsed, text digest',
      span: makeSpan({
        attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'shell', 'tool_call.id': 'call_7', 'input.value': 'ls -la /tmp' },
      }),
      expected: { kind: 'tool', toolCallId: 'call_7', args: { raw: 'ls -la /tmp', digest: textDigest('ls -la /tmp'), declared: 'text' } },
      absent: ['result', 'toolSchemas'],
    },
    {
      title: 'lower-case retriever kind and tool.id fallback',
      span: makeSpan({ attributes: { 'openinference.span.kind': 'retriever', 'tool.id': 't-1', 'output.value': '' } }),
      expected: { kind: 'retrieval', toolCallId: 't-1', result: '' },
      absent: ['input', 'args'],
    },
  ],

  openllmetry: [
    {
      title: 'tool decorator: entity input {args,kwargs} kept and parsed, session from association',
      span: makeSpan({
        name: 'search.tool',
        attributes: {
          'traceloop.span.kind': 'tool',
          'traceloop.entity.name': 'search',
          'traceloop.entity.input': '{"args": ["otel"], "kwargs": {"limit": 3}}',
          'traceloop.entity.output': '["a", "b"]',
          'traceloop.association.properties.session_id': 's-5',
        },
      }),
      expected: {
        kind: 'tool',
        toolName: 'search',
        args: {
          raw: '{"args": ["otel"], "kwargs": {"limit": 3}}',
          parsed: { args: ['otel'], kwargs: { limit: 3 } },
          digest: argsDigest('{"kwargs":{"limit":3},"args":["otel"]}'),
        },
        result: '["a", "b"]',
        sessionId: 's-5',
      },
      absent: ['toolCallId', 'input', 'error', 'model'],
    },
    {
      title: 'tool decorator that also carries gen_ai.operation.name stays OpenLLMetry',
      span: makeSpan({
        attributes: {
          'traceloop.span.kind': 'tool',
          'traceloop.entity.name': 'calc',
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'calculator',
          'traceloop.entity.input': '{"args": [1, 2], "kwargs": {}}',
          'gen_ai.conversation.id': 'conv-2',
        },
      }),
      expected: {
        kind: 'tool',
        toolName: 'calculator',
        sessionId: 'conv-2',
        args: { raw: '{"args": [1, 2], "kwargs": {}}', parsed: { args: [1, 2], kwargs: {} }, digest: jsonDigest({ args: [1, 2], kwargs: {} }) },
      },
      absent: ['result'],
    },
    {
      title: 'workflow is an agent step named by its entity',
      span: makeSpan({
        name: 'trip_planner.workflow',
        attributes: {
          'traceloop.span.kind': 'workflow',
          'traceloop.entity.name': 'trip_planner',
          'traceloop.entity.input': '{"args": [], "kwargs": {"city": "Oslo"}}',
        },
      }),
      expected: { kind: 'agent', agentName: 'trip_planner', input: '{"args": [], "kwargs": {"city": "Oslo"}}' },
      absent: ['args', 'result', 'toolName'],
    },
    {
      title: 'task failing by status only',
      span: makeSpan({ status: { code: 2, message: 'KeyError' }, attributes: { 'traceloop.span.kind': 'task', 'traceloop.entity.name': 'parse' } }),
      expected: { kind: 'other', error: { source: 'status', message: 'KeyError' } },
      absent: ['agentName', 'toolName', 'result'],
    },
    {
      title: 'legacy LLM span: model, first completion, request functions',
      span: makeSpan({
        name: 'openai.chat',
        attributes: {
          'llm.request.type': 'chat',
          'gen_ai.system': 'OpenAI',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.prompt.0.role': 'user',
          'gen_ai.prompt.0.content': 'weather?',
          'gen_ai.completion.0.content': 'sunny',
          'llm.request.functions.0.name': 'get_weather',
          'llm.request.functions.0.parameters': JSON.stringify(weatherSchema),
          'gen_ai.conversation.id': 'conv-3',
        },
      }),
      expected: { kind: 'llm', model: 'gpt-4o', result: 'sunny', toolSchemas: { get_weather: weatherSchema }, sessionId: 'conv-3' },
      absent: ['input', 'toolName', 'args', 'error'],
    },
    {
      title: 'legacy embedding span is retrieval',
      span: makeSpan({ attributes: { 'llm.request.type': 'embedding', 'gen_ai.request.model': 'ada-002' } }),
      expected: { kind: 'retrieval', model: 'ada-002' },
      absent: ['result', 'toolSchemas'],
    },
  ],

  'vercel-ai': [
    {
      title: 'ai.toolCall with name, id, args, result, functionId and metadata sessionId',
      span: makeSpan({
        name: 'ai.toolCall',
        attributes: {
          'operation.name': 'ai.toolCall weather-agent',
          'ai.operationId': 'ai.toolCall',
          'ai.toolCall.name': 'get_weather',
          'ai.toolCall.id': 'call_A',
          'ai.toolCall.args': '{"city":"Paris"}',
          'ai.toolCall.result': '{"temp":21}',
          'ai.telemetry.functionId': 'weather-agent',
          'ai.telemetry.metadata.sessionId': 'chat-42',
        },
      }),
      expected: {
        kind: 'tool',
        toolName: 'get_weather',
        toolCallId: 'call_A',
        args: { raw: '{"city":"Paris"}', parsed: { city: 'Paris' }, digest: jsonDigest({ city: 'Paris' }), declared: 'json' },
        result: '{"temp":21}',
        agentName: 'weather-agent',
        sessionId: 'chat-42',
      },
      absent: ['error', 'model', 'input'],
    },
    {
      title: 'ai.toolCall without recorded inputs/outputs, failing with an exception',
      span: makeSpan({
        name: 'ai.toolCall',
        status: { code: 2, message: 'fetch failed' },
        attributes: { 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': 'fetch_page', 'ai.toolCall.id': 'call_B' },
        events: [exceptionEvent({ 'exception.type': 'TypeError', 'exception.message': 'fetch failed' })],
      }),
      expected: { kind: 'tool', toolName: 'fetch_page', error: { source: 'exception', type: 'TypeError', message: 'fetch failed' } },
      absent: ['args', 'result', 'sessionId', 'agentName'],
    },
    {
      title: 'doGenerate is llm: response model, prompt messages, response text, prompt tools',
      span: makeSpan({
        name: 'ai.generateText.doGenerate',
        attributes: {
          'ai.operationId': 'ai.generateText.doGenerate',
          'ai.model.id': 'gpt-4o',
          'ai.response.model': 'gpt-4o-2024-08-06',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.system': 'openai.chat',
          'ai.prompt.messages': '[{"role":"user","content":"hi"}]',
          'ai.response.text': 'hello',
          'ai.prompt.tools': [JSON.stringify({ type: 'function', name: 'get_weather', inputSchema: weatherSchema })],
          'ai.telemetry.metadata.conversationId': 'conv-7',
        },
      }),
      expected: {
        kind: 'llm',
        model: 'gpt-4o-2024-08-06',
        input: '[{"role":"user","content":"hi"}]',
        result: 'hello',
        toolSchemas: { get_weather: weatherSchema },
        sessionId: 'conv-7',
      },
      absent: ['toolName', 'args', 'error', 'agentName'],
    },
    {
      title: 'streamText is an agent run named by functionId (name only, no operationId)',
      span: makeSpan({
        name: 'ai.streamText',
        attributes: { 'ai.telemetry.functionId': 'support-bot', 'ai.prompt': '{"prompt":"help"}', 'ai.model.id': 'claude-sonnet' },
      }),
      expected: { kind: 'agent', agentName: 'support-bot', input: '{"prompt":"help"}', model: 'claude-sonnet' },
      absent: ['result', 'sessionId'],
    },
    {
      title: 'a span with both ai.* and gen_ai.* reads GenAI facts its ai.* lacks',
      span: makeSpan({
        name: 'ai.toolCall',
        attributes: {
          'ai.operationId': 'ai.toolCall',
          'gen_ai.operation.name': 'execute_tool',
          'ai.toolCall.name': 'lookup',
          'gen_ai.tool.call.id': 'call_G',
          'gen_ai.tool.call.arguments': '{"id": 7}',
          'gen_ai.conversation.id': 'conv-8',
        },
      }),
      expected: {
        kind: 'tool',
        toolName: 'lookup',
        toolCallId: 'call_G',
        args: { raw: '{"id": 7}', parsed: { id: 7 }, digest: jsonDigest({ id: 7 }), declared: 'json' },
        sessionId: 'conv-8',
      },
      absent: ['result'],
    },
    {
      title: 'generateObject wrapper is other; embed is retrieval',
      span: makeSpan({ name: 'ai.generateObject', attributes: { 'ai.operationId': 'ai.generateObject', 'ai.response.object': '{"a":1}' } }),
      expected: { kind: 'other', result: '{"a":1}' },
      absent: ['agentName', 'input'],
    },
    {
      title: 'embed is retrieval',
      span: makeSpan({ name: 'ai.embed.doEmbed', attributes: { 'ai.operationId': 'ai.embed.doEmbed', 'ai.model.id': 'text-embedding-3-small' } }),
      expected: { kind: 'retrieval', model: 'text-embedding-3-small' },
      absent: ['result', 'input'],
    },
  ],

  generic: [
    {
      title: 'unclaimed span failing by status, with a session.id',
      span: makeSpan({ name: 'HTTP GET', status: { code: 2, message: 'timeout' }, attributes: { 'session.id': 'sess-1' } }),
      expected: { kind: 'other', error: { source: 'status', message: 'timeout' }, sessionId: 'sess-1', service: 'agent-svc' },
      absent: ['toolName', 'args', 'result', 'input', 'model', 'agentName'],
    },
    {
      title: 'unclaimed root span with an exception event, no service, empty status message',
      span: makeSpan({
        name: 'main',
        parentSpanId: undefined,
        status: { code: 0, message: '' },
        resource: {},
        events: [exceptionEvent({ 'exception.type': 'OSError', 'exception.message': '' })],
      }),
      expected: { kind: 'other', error: { source: 'exception', type: 'OSError' } },
      absent: ['parentId', 'service', 'sessionId'],
    },
    {
      title: 'unclaimed span with an empty conversation id and nothing else',
      span: makeSpan({ attributes: { 'gen_ai.conversation.id': '', 'gen_ai.request.model': 'gpt-4o' } }),
      expected: { kind: 'other' },
      absent: ['sessionId', 'error', 'model'],
    },
  ],
};

describe.each(MAPPERS.map((mapper): [string, ConventionMapper] => [mapper.name, mapper]))('%s mapper contract', (name, mapper) => {
  const cases = CASES[name] ?? [];

  it('has contract fixtures', () => {
    expect(cases.length).toBeGreaterThanOrEqual(3);
  });

  it.each(cases)('$title', ({ span, expected, absent }) => {
    expect(mapper.matches(span)).toBe(true);
    expect(selectMapper(span)).toBe(mapper);

    const step = normalizeSpan(span);
    // The normalizer adds what the span's content events carry, the same for every mapper.
    const mapped = mapper.toStep(span);
    applyContentEvents(mapped, span.events);
    expect(step).toEqual(mapped);
    expect(step.convention).toBe(name);

    // identity and provenance copied from the span
    expect(step.id).toBe(span.spanId);
    expect(step.traceId).toBe(span.traceId);
    expect(step.name).toBe(span.name);
    expect(step.startTimeUnixNano).toBe(span.startTimeUnixNano);
    expect(step.endTimeUnixNano).toBe(span.endTimeUnixNano);
    expect(step.statusCode).toBe(span.status.code);
    expect(step.attributes).toBe(span.attributes);
    expect(step.resource).toBe(span.resource);
    expect(step.encodedBytes).toBe(span.encodedBytes);
    expect(step.eventNames).toEqual(span.events.map((event) => event.name));
    if (span.parentSpanId) expect(step.parentId).toBe(span.parentSpanId);
    const service = span.resource['service.name'];
    if (typeof service === 'string') expect(step.service).toBe(service);

    // the facts this case is about
    for (const [key, value] of Object.entries(expected)) {
      expect(step[key as keyof Step], key).toEqual(value);
    }
    for (const key of absent) {
      expect(key in step, `${key} must be absent`).toBe(false);
    }

    // no optional fact is present-but-undefined, and no id or name is ""
    for (const key of OPTIONAL_FACTS) {
      if (key in step) expect(step[key], key).not.toBeUndefined();
    }
    for (const key of ['toolName', 'toolCallId', 'model', 'agentName', 'sessionId', 'service'] as const) {
      if (key in step) expect(step[key], key).not.toBe('');
    }

    // args are self-consistent: parsed exactly when raw is JSON, a recorded call read as its
    // keyword arguments; the digest is of what parsed holds, else of raw
    if (step.args !== undefined) {
      let parsed: { value: unknown } | undefined;
      try {
        parsed = { value: JSON.parse(step.args.raw) };
      } catch (error) {
        expect(error).toBeInstanceOf(SyntaxError);
      }
      expect('parsed' in step.args).toBe(parsed !== undefined);
      const call = parsed === undefined ? undefined : readRecordedCall(parsed.value);
      expect(step.args.recorded).toBe(call?.shape === 'kwargs' ? 'kwargs' : undefined);
      if (parsed !== undefined) expect(step.args.parsed).toEqual(call?.shape === 'kwargs' ? call.kwargs : parsed.value);
      expect(step.args.digest).toBe(parsed === undefined ? argsDigest(step.args.raw) : jsonDigest(step.args.parsed));
    }

    // an error is read exactly when the span shows one
    const showsError = span.status.code === 2 || span.events.some((event) => event.name === 'exception') || 'error.type' in span.attributes;
    expect(step.error !== undefined).toBe(showsError);
  });
});

/**
 * Session identity is one mechanism, not a per-convention reading: every mapper reads every
 * key of `SESSION_ID_KEYS`, with the same precedence, whatever convention claimed the span.
 */
describe.each(MAPPERS.map((mapper): [string, ConventionMapper] => [mapper.name, mapper]))('%s mapper reads sessions like every mapper', (name, mapper) => {
  const base = CASES[name]![0]!.span;
  const withoutSessions = Object.fromEntries(Object.entries(base.attributes).filter(([key]) => !SESSION_ID_KEYS.includes(key)));
  const spanWith = (sessions: Record<string, string>) => makeSpan({ ...base, attributes: { ...withoutSessions, ...sessions } });

  it.each(SESSION_ID_KEYS.map((key) => [key]))('reads %s', (key) => {
    const span = spanWith({ [key]: 'sess-42' });
    expect(selectMapper(span)).toBe(mapper);
    expect(normalizeSpan(span).sessionId).toBe('sess-42');
  });

  it('takes the first key of the precedence list when a span names several', () => {
    const all = Object.fromEntries(SESSION_ID_KEYS.map((key, i) => [key, `id-${i}`]));
    expect(normalizeSpan(spanWith(all)).sessionId).toBe('id-0');
    const withoutFirst = Object.fromEntries(SESSION_ID_KEYS.slice(1).map((key, i) => [key, `id-${i + 1}`]));
    expect(normalizeSpan(spanWith(withoutFirst)).sessionId).toBe('id-1');
  });

  it('treats an empty id as no session', () => {
    expect('sessionId' in normalizeSpan(spanWith({ 'session.id': '' }))).toBe(false);
  });
});

it('knows the session keys of the instrumentations it is used with', () => {
  for (const key of [
    'gen_ai.conversation.id',
    'session.id',
    'gcp.vertex.agent.session_id',
    'ai.telemetry.metadata.sessionId',
    'traceloop.association.properties.thread_id',
  ]) {
    expect(SESSION_ID_KEYS).toContain(key);
  }
});
