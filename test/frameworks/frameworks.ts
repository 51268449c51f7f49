import type { FrameworkSpec } from './harness.ts';

/**
 * Whether `trajwatch serve` receives OTLP logs (`POST /v1/logs`, gRPC LogsService). Until it
 * does, the cells that depend on log records (marked `needsLogs` below) are reported as
 * pending rather than asserted. Flip to true when the logs receiver lands: the pending cells
 * then become assertions like every other.
 */
export const LOGS_RECEIVER_LANDED = false;

const OTEL = ['opentelemetry-sdk', 'opentelemetry-exporter-otlp-proto-http'];

/** The Python frameworks of the matrix, each with its own instrumentation, as a new user sets it up. */
export const FRAMEWORKS: readonly FrameworkSpec[] = [
  {
    id: 'langgraph',
    title: 'LangGraph',
    venv: 'langgraph',
    script: 'langgraph_agent',
    instrumentation: 'OpenInference (openinference-instrumentation-langchain)',
    packages: ['langgraph', 'langchain-openai', 'openinference-instrumentation-langchain', ...OTEL],
    session: { kind: 'session' },
  },
];
