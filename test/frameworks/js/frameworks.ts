import type { JsFrameworkSpec } from './js-harness.ts';
import { runLangChain } from './langchain.ts';
import { runMastra } from './mastra.ts';
import { runVercelAi7 } from './vercel-ai-7.ts';
import { runVercelAi } from './vercel-ai.ts';

const OTEL_NODE = ['@opentelemetry/sdk-node', '@opentelemetry/exporter-trace-otlp-proto'];

/** The JavaScript frameworks of the matrix, each with its own instrumentation, as a new user sets it up. */
export const JS_FRAMEWORKS: readonly JsFrameworkSpec[] = [
  {
    id: 'mastra',
    title: 'Mastra (JS), `agent.generate`',
    instrumentation: "Mastra's own observability (@mastra/observability + @mastra/otel-exporter, custom OTLP endpoint)",
    packages: ['@mastra/core', '@mastra/memory', '@mastra/observability', '@mastra/otel-exporter'],
    session: { kind: 'session' },
    run: (o) => runMastra(o, 'generate'),
  },
  {
    id: 'mastra-stream',
    title: 'Mastra (JS), `agent.stream`',
    instrumentation: "Mastra's own observability, as above",
    packages: ['@mastra/core', '@mastra/memory', '@mastra/observability', '@mastra/otel-exporter'],
    session: { kind: 'session' },
    run: (o) => runMastra(o, 'stream'),
  },
  {
    id: 'langchain-js',
    title: 'LangChain.js (createAgent), `agent.invoke`',
    instrumentation: 'OpenInference (@arizeai/openinference-instrumentation-langchain)',
    packages: ['langchain', '@langchain/core', '@langchain/langgraph', '@langchain/openai', '@arizeai/openinference-instrumentation-langchain', ...OTEL_NODE],
    session: { kind: 'session' },
    run: (o) => runLangChain(o, 'invoke'),
  },
  {
    id: 'langchain-js-stream',
    title: 'LangChain.js (createAgent), `agent.stream`',
    instrumentation: 'OpenInference, as above',
    packages: ['langchain', '@langchain/core', '@langchain/langgraph', '@langchain/openai', '@arizeai/openinference-instrumentation-langchain', ...OTEL_NODE],
    session: { kind: 'session' },
    run: (o) => runLangChain(o, 'stream'),
  },
  {
    id: 'vercel-ai',
    title: 'Vercel AI SDK 6 (JS), `generateText`',
    instrumentation: "the SDK's own `experimental_telemetry` (`ai.*` spans)",
    packages: ['ai', '@ai-sdk/openai', ...OTEL_NODE],
    session: { kind: 'session' },
    run: (o) => runVercelAi(o, 'generate'),
  },
  {
    id: 'vercel-ai-stream',
    title: 'Vercel AI SDK 6 (JS), `streamText`',
    instrumentation: "the SDK's own `experimental_telemetry`, as above",
    packages: ['ai', '@ai-sdk/openai', ...OTEL_NODE],
    session: { kind: 'session' },
    run: (o) => runVercelAi(o, 'stream'),
  },
  {
    id: 'vercel-ai-7',
    title: 'Vercel AI SDK 7 (JS), `generateText`',
    instrumentation: '@ai-sdk/otel (OTel GenAI spans), session via `enrichSpan`',
    packages: ['ai-v7', '@ai-sdk/otel', 'ai-sdk-openai-v4', ...OTEL_NODE],
    session: { kind: 'session' },
    run: runVercelAi7,
  },
];
