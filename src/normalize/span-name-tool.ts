/**
 * The tool name a span name carries, where the span's convention defines the span name from
 * it; read only when the span has no tool-name attribute. Two conventions do:
 *
 * - GenAI: an execute-tool span's name is `execute_tool {gen_ai.tool.name}`.
 * - OpenLLMetry: traceloop-sdk's decorators, and its MCP instrumentation, name a span
 *   `{entity name}.{span kind}`, so a tool span `get_weather.tool`.
 *
 * OpenInference defines no span name (its smolagents instrumentation names a tool span after
 * the tool's Python class, `SimpleTool`), so nothing is read from its span names.
 */

/** GenAI `execute_tool get_weather` → `get_weather`; `undefined` for any other name. */
export function genaiToolNameFromSpanName(spanName: string): string | undefined {
  return spanName.startsWith(GENAI_PREFIX) ? nameOrUndefined(spanName.slice(GENAI_PREFIX.length)) : undefined;
}

/** OpenLLMetry `get_weather.tool` → `get_weather`; `undefined` for any other name. */
export function traceloopToolNameFromSpanName(spanName: string): string | undefined {
  return spanName.endsWith(TRACELOOP_SUFFIX) ? nameOrUndefined(spanName.slice(0, -TRACELOOP_SUFFIX.length)) : undefined;
}

const GENAI_PREFIX = 'execute_tool ';
const TRACELOOP_SUFFIX = '.tool';

function nameOrUndefined(name: string): string | undefined {
  const trimmed = name.trim();
  return trimmed === '' ? undefined : trimmed;
}
