import type { SemanticQuestion } from './questions.ts';

/**
 * How the judge is asked to shape its reply.
 * - `lines`: one `<n>: <letter> | <event id>` line per question, asked for in words only. Works
 *   with any Chat Completions server; small models often miss the shape.
 * - `json_schema`: the OpenAI-compatible `response_format: {type: "json_schema", json_schema: {…}}`
 *   (OpenAI, vLLM, llama.cpp's own server, Ollama, LM Studio): the server constrains decoding.
 * - `json_object`: `response_format: {type: "json_object", schema: …}`, the form llama-cpp-python's
 *   server takes (it refuses `json_schema`: "Input should be 'text' or 'json_object'").
 * - `grammar`: llama.cpp's `grammar` field (GBNF) for servers that offer only that.
 * The three structured formats ask for the same JSON document (`answerSchema`).
 */
export const ANSWER_FORMATS = ['lines', 'json_schema', 'json_object', 'grammar'] as const;
export type AnswerFormat = (typeof ANSWER_FORMATS)[number];

/** The JSON property of the i-th question (0-based) in a structured reply. */
export function answerKey(index: number): string {
  return `q${index + 1}`;
}

/** The letters a question's options are written as. */
export function optionLetters(q: SemanticQuestion, letter: (i: number) => string): string[] {
  return q.options.map((_, k) => letter(k));
}

/**
 * The JSON Schema of a structured reply: one required property per question (`q1`, `q2`, …),
 * each `{option, support}`, the option an enum of that question's letters and the support an
 * enum of the window's event ids (and `unresolved`). Object properties only (no `prefixItems`),
 * all required, no additional properties: the subset OpenAI's strict mode accepts.
 */
export function answerSchema(
  questions: readonly SemanticQuestion[],
  supportChoices: readonly string[],
  letter: (i: number) => string,
): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  questions.forEach((q, i) => {
    properties[answerKey(i)] = {
      type: 'object',
      properties: { option: { type: 'string', enum: optionLetters(q, letter) }, support: { type: 'string', enum: [...supportChoices] } },
      required: ['option', 'support'],
      additionalProperties: false,
    };
  });
  return { type: 'object', properties, required: questions.map((_, i) => answerKey(i)), additionalProperties: false };
}

/** A JSON string literal as a GBNF terminal: the JSON text, quoted for GBNF. */
function gbnfLiteral(jsonText: string): string {
  return `"${jsonText.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** The same document as `answerSchema`, as a llama.cpp GBNF grammar (compact JSON, fixed key order). */
export function answerGrammar(questions: readonly SemanticQuestion[], supportChoices: readonly string[], letter: (i: number) => string): string {
  const support = supportChoices.map((id) => gbnfLiteral(JSON.stringify(id))).join(' | ');
  const rules = [`root ::= "{" ${questions.map((_, i) => `a${i + 1}`).join(' "," ')} "}"`, `support ::= ${support}`];
  questions.forEach((q, i) => {
    const opts = optionLetters(q, letter)
      .map((l) => gbnfLiteral(JSON.stringify(l)))
      .join(' | ');
    rules.push(`a${i + 1} ::= ${gbnfLiteral(`${JSON.stringify(answerKey(i))}:{"option":`)} (${opts}) ${gbnfLiteral(',"support":')} support "}"`);
  });
  return rules.join('\n');
}

/** The request fields that ask a server for the structured shape; none for `lines`. */
export function formatFields(
  format: AnswerFormat,
  questions: readonly SemanticQuestion[],
  supportChoices: readonly string[],
  letter: (i: number) => string,
): Record<string, unknown> {
  switch (format) {
    case 'lines':
      return {};
    case 'json_schema':
      return {
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'trajwatch_answers', strict: true, schema: answerSchema(questions, supportChoices, letter) },
        },
      };
    case 'json_object':
      return { response_format: { type: 'json_object', schema: answerSchema(questions, supportChoices, letter) } };
    case 'grammar':
      return { grammar: answerGrammar(questions, supportChoices, letter) };
  }
}
