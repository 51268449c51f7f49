import type { FrameworkSpec } from './harness.ts';

/**
 * Whether `trajwatch serve` receives OTLP logs (`POST /v1/logs`, gRPC LogsService). Until it
 * does, the cells that depend on log records (marked `needsLogs` below) are reported as
 * pending rather than asserted. Flip to true when the logs receiver lands: the pending cells
 * then become assertions like every other.
 */
export const LOGS_RECEIVER_LANDED = true;

const OTEL = ['opentelemetry-sdk', 'opentelemetry-exporter-otlp-proto-http'];

/** The Python frameworks of the matrix, each with its own instrumentation, as a new user sets it up. */
export const FRAMEWORKS: readonly FrameworkSpec[] = [
  {
    id: 'langgraph',
    title: 'LangGraph (prebuilt ReAct agent)',
    venv: 'langgraph',
    script: 'langgraph_agent',
    instrumentation: 'OpenInference (openinference-instrumentation-langchain)',
    packages: ['langgraph', 'langchain-openai', 'openinference-instrumentation-langchain', ...OTEL],
    session: { kind: 'session' },
  },
  {
    id: 'llamaindex',
    title: 'LlamaIndex (FunctionAgent)',
    venv: 'llamaindex',
    script: 'llamaindex_agent',
    instrumentation: 'OpenInference (openinference-instrumentation-llama-index), `using_session`',
    packages: ['llama-index-core', 'llama-index-llms-openai', 'openinference-instrumentation-llama-index', ...OTEL],
    session: { kind: 'session' },
  },
  {
    id: 'smolagents',
    title: 'smolagents (ToolCallingAgent)',
    venv: 'smolagents',
    script: 'smolagents_agent',
    instrumentation: 'OpenInference (openinference-instrumentation-smolagents), `using_session`',
    packages: ['smolagents', 'openinference-instrumentation-smolagents', ...OTEL],
    session: { kind: 'session' },
  },
  {
    id: 'crewai',
    title: 'CrewAI (one agent, a task per turn)',
    venv: 'crewai',
    script: 'crewai_agent',
    instrumentation: 'OpenInference (openinference-instrumentation-crewai), `using_session`',
    packages: ['crewai', 'openinference-instrumentation-crewai', ...OTEL],
    env: { CREWAI_DISABLE_TELEMETRY: 'true', CREWAI_TRACING_ENABLED: 'false' },
    session: { kind: 'session' },
  },
  {
    id: 'strands',
    title: 'Strands Agents, default settings',
    venv: 'strands',
    script: 'strands_agent',
    instrumentation: 'its own (`StrandsTelemetry().setup_otlp_exporter()`), `trace_attributes={"session.id": …}`',
    packages: ['strands-agents', 'opentelemetry-sdk', 'opentelemetry-exporter-otlp-proto-http'],
    session: { kind: 'session' },
  },
  {
    id: 'strands-latest',
    title: 'Strands Agents, `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`',
    venv: 'strands',
    script: 'strands_agent',
    instrumentation: 'its own, latest experimental GenAI conventions',
    packages: ['strands-agents', 'opentelemetry-sdk', 'opentelemetry-exporter-otlp-proto-http'],
    env: { OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental' },
    session: { kind: 'session' },
  },
  {
    id: 'openllmetry',
    title: 'OpenLLMetry (`openai` tool loop, `@workflow`/`@tool`)',
    venv: 'openllmetry',
    script: 'openllmetry_agent',
    instrumentation: 'traceloop-sdk, its own exporter, association property `session_id`',
    packages: ['traceloop-sdk', 'opentelemetry-instrumentation-openai', 'openai'],
    env: { TRACELOOP_TELEMETRY: 'false', TRACELOOP_METRICS_ENABLED: 'false' },
    session: { kind: 'session' },
  },
  {
    id: 'pydantic-ai',
    title: 'Pydantic AI',
    venv: 'pydantic-ai',
    script: 'pydantic_ai_agent',
    instrumentation: 'its own (`Agent.instrument_all()`, no Logfire), `conversation_id`',
    packages: ['pydantic-ai-slim', ...OTEL],
    session: { kind: 'session' },
  },
  {
    id: 'openai-agents',
    title: 'OpenAI Agents SDK (Responses API)',
    venv: 'openai-agents',
    script: 'openai_agents_agent',
    instrumentation: 'OpenInference (openinference-instrumentation-openai-agents), `using_session`',
    packages: ['openai-agents', 'openinference-instrumentation-openai-agents', ...OTEL],
    session: { kind: 'session' },
  },
  {
    id: 'openai-v2',
    title: '`openai` tool loop, official OpenAI instrumentation',
    venv: 'openai-v2',
    script: 'openai_v2_agent',
    instrumentation: 'opentelemetry-instrumentation-openai-v2, content as OTLP log events',
    packages: ['opentelemetry-instrumentation-openai-v2', 'openai', ...OTEL],
    env: { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true', OTEL_LOGS_EXPORTER: 'otlp' },
    session: { kind: 'none', reason: 'the instrumentation has none; the app wraps both turns in one span' },
    // Tools make no spans here; the calls, their arguments and the tool's error text exist only
    // in the message-content log records.
    needsLogs: ['args', 'repetition', 'failure'],
  },
];
