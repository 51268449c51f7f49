import type { AnswerFormat } from './answer-format.ts';

/** The request field each structured format is sent in (answer-format.ts `formatFields`). */
const FIELD: Record<Exclude<AnswerFormat, 'lines'>, string> = { json_schema: 'response_format', json_object: 'response_format', grammar: 'grammar' };

/** What to configure instead of each format, most likely first. */
const INSTEAD: Record<Exclude<AnswerFormat, 'lines'>, string> = {
  json_schema: "json_object (llama-cpp-python's server), grammar (a llama.cpp server with GBNF only) or lines (no structured output)",
  json_object: 'json_schema (OpenAI, vLLM, llama.cpp, Ollama, LM Studio), grammar (GBNF only) or lines (no structured output)',
  grammar: 'json_schema (OpenAI, vLLM, llama.cpp, Ollama, LM Studio), json_object (llama-cpp-python) or lines (no structured output)',
};

/** The format a request body asks for, read from the fields `formatFields` writes. */
export function requestedFormat(body: Readonly<Record<string, unknown>>): AnswerFormat {
  if (body.grammar !== undefined) return 'grammar';
  const type = (body.response_format as { type?: unknown } | undefined)?.type;
  return type === 'json_schema' || type === 'json_object' ? type : 'lines';
}

/**
 * Whether an error answer is the server refusing the structured format the request asked for,
 * and then the failure message naming the key to change and what to set it to; else null. A
 * refusal is an error status (4xx or 5xx: llama-cpp-python answers a request it cannot validate
 * with 500) whose body names the field the format was sent in (`response_format`, `grammar`).
 * The same request would be refused again, so it is not retried.
 *
 * @example formatRefusal('json_schema', 500, `{"error":{"message":"… 'response_format', 'type' … Input should be 'text' or 'json_object'"}}`)
 */
export function formatRefusal(format: AnswerFormat, status: number, payload: string): string | null {
  if (format === 'lines' || status < 400 || status === 401 || status === 403 || status === 404 || status === 429) return null;
  if (!payload.toLowerCase().includes(FIELD[format])) return null;
  return (
    `the server refused judge.client.answerFormat ${format} (HTTP ${status}, ${FIELD[format]}: ${payload.slice(0, 200)}); ` +
    `set judge.client.answerFormat to ${INSTEAD[format]}`
  );
}
