import { describe, expect, it } from 'vitest';
import { parseAnswers, type TokenLogprob } from '../../src/judge/parse-answers.ts';
import { answerGrammar, answerSchema, formatFields } from '../../src/judge/answer-format.ts';
import { JudgeClientSchema } from '../../src/judge/client.ts';
import { evaluatorIdentity } from '../../src/judge/evaluator-identity.ts';
import { parseJsonAnswers } from '../../src/judge/parse-json-answers.ts';
import { optionLetter, requestContractDigest } from '../../src/judge/prompt.ts';
import { SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { answers, completion } from './scripted-chat-server.ts';

const CHOICES = ['e1', 'e2', 'unresolved'];

function read(c: unknown): { content: string; logprobs: TokenLogprob[] | null } {
  const choice = (c as { choices: { message: { content: string }; logprobs?: { content: TokenLogprob[] } }[] }).choices[0]!;
  return { content: choice.message.content, logprobs: choice.logprobs?.content ?? null };
}

describe('parseAnswers', () => {
  it('reads each option, its support id and option probabilities from logprobs', () => {
    const { content, logprobs } = read(completion(answers({ 0: { letter: 'A', support: 'e2', p: 0.9 } })));
    const r = parseAnswers(content, logprobs, CHOICES);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.answers).toHaveLength(8);
    expect(r.answers[0]).toMatchObject({ questionId: 'evidence.unverified-completion', option: 'yes', support: 'e2' });
    expect(r.answers[0]!.probabilities!.yes).toBeCloseTo(0.9);
    expect(r.answers[0]!.probabilities!.no).toBeCloseTo(0.1);
    expect(r.answers[1]).toMatchObject({ option: 'no', support: 'unresolved' });
  });

  it('records probabilities as unavailable when the server returns no logprobs', () => {
    const { content, logprobs } = read(completion(answers(), { logprobs: false }));
    const r = parseAnswers(content, logprobs, CHOICES);
    expect(r.ok && r.answers.every((a) => a.probabilities === null)).toBe(true);
  });

  it.each([
    ['prose', 'Sure! Here is my analysis of the trace.'],
    ['a missing question', '1: A | e1\n2: B | e1'],
    ['an unknown option letter', Array.from({ length: 8 }, (_, i) => `${i + 1}: ${i === 3 ? 'Z' : 'B'} | e1`).join('\n')],
    ['a support id outside the window', Array.from({ length: 8 }, (_, i) => `${i + 1}: B | ${i === 0 ? 'e9' : 'e1'}`).join('\n')],
    ['a repeated question', Array.from({ length: 8 }, (_, i) => `${i === 7 ? 1 : i + 1}: B | e1`).join('\n')],
    ['an injected route', Array.from({ length: 8 }, (_, i) => `${i + 1}: B | e1`).join('\n') + '\nROUTE: coordinator-alarm'],
  ])('refuses the whole reply for %s', (_name, content) => {
    expect(parseAnswers(content, null, CHOICES).ok).toBe(false);
  });
});

describe('parseJsonAnswers (structured output)', () => {
  const QS = SEMANTIC_QUESTIONS.slice(0, 2);
  /** Tokens as llama.cpp's server writes a constrained reply: each with its *unconstrained* top alternatives. */
  function tokens(parts: [string, number, [string, number][]?][]): TokenLogprob[] {
    return parts.map(([token, logprob, top]) => ({ token, logprob, top_logprobs: (top ?? [[token, logprob]]).map(([t, l]) => ({ token: t, logprob: l })) }));
  }
  // Measured on SmolLM2-135M-Instruct under llama-cpp-python's json_object schema: at the first
  // answer the server listed `yes` (-1.21) far ahead of the chosen `A` (-4.09).
  const content = '{"q1":{"option":"A","support":"e2"},"q2":{"option":"B","support":"unresolved"}}';
  const logprobs = tokens([
    ['{"', -0.1],
    ['q', -0.1],
    ['1', -0.1],
    ['":{"', -0.1],
    ['option', -0.1],
    ['":"', -0.1],
    [
      'A',
      -4.09,
      [
        ['yes', -1.21],
        ['Yes', -1.5],
        ['1', -2.6],
        ['A', -4.09],
        ['B', -4.6],
      ],
    ],
    ['","', -0.1],
    ['support', -0.1],
    ['":"', -0.1],
    ['e', -0.5],
    ['2', -0.7],
    ['"},"', -0.1],
    ['q', -0.1],
    ['2', -0.1],
    ['":{"', -0.1],
    ['option', -0.1],
    ['":"', -0.1],
    [
      'B',
      -0.15,
      [
        ['B', -0.15],
        ['A', -2.42],
        ['D', -4.28],
        ['C', -4.6],
        ['E', -4.94],
      ],
    ],
    ['","', -0.1],
    ['support', -0.1],
    ['":"', -0.1],
    ['unresolved', -0.2],
    ['"}}', -0.1],
  ]);

  it("renormalizes the options' probabilities over the letters the schema allows, ignoring the unconstrained tokens it did not", () => {
    const r = parseJsonAnswers(content, logprobs, CHOICES, QS);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const [a1, a2] = r.answers;
    expect(a1).toMatchObject({ questionId: QS[0]!.id, option: 'yes', support: 'e2' });
    const pa = Math.exp(-4.09);
    const pb = Math.exp(-4.6);
    expect(a1!.probabilities!.yes).toBeCloseTo(pa / (pa + pb), 9);
    expect(a1!.probabilities!.no).toBeCloseTo(pb / (pa + pb), 9);
    expect(a1!.probabilities!.unsure).toBeUndefined();
    // C and D were not in the top 5: each had at most the lowest listed (-4.6) before, so at most this after.
    expect(a1!.unseenBound).toBeCloseTo(pb / (pa + pb + pb), 9);
    expect(a1!.supportProbability).toBeCloseTo(Math.exp(-1.2), 9);
    const [b, a, d, c] = [-0.15, -2.42, -4.28, -4.6].map(Math.exp) as [number, number, number, number];
    const sum = a + b + c + d;
    expect(a2).toMatchObject({ option: 'no', support: 'unresolved' });
    expect(a2!.probabilities).toEqual({ yes: a / sum, no: b / sum, unavailable: d / sum, unsure: c / sum });
    expect(a2!.unseenBound).toBeCloseTo(Math.exp(-4.94) / (sum + Math.exp(-4.94)), 9);
  });

  it('refuses the whole reply when it is not the schema: not JSON, a missing or extra question, a letter or support outside its enum', () => {
    const bad = (c: string) => parseJsonAnswers(c, null, CHOICES, QS);
    expect(bad('1: A | e1\n2: B | e2')).toEqual({ ok: false, reason: 'the reply is not JSON' });
    expect(bad('{"q1":{"option":"A","support":"e1"}}')).toEqual({ ok: false, reason: 'no answer to question 2' });
    expect(bad('{"q1":{"option":"A","support":"e1"},"q2":{"option":"B","support":"e1"},"q3":{"option":"A","support":"e1"}}')).toMatchObject({
      ok: false,
      reason: 'property "q3" is not a question',
    });
    expect(bad('{"q1":{"option":"E","support":"e1"},"q2":{"option":"B","support":"e1"}}')).toMatchObject({
      ok: false,
      reason: 'option "E" is not a letter of question 1',
    });
    expect(bad('{"q1":{"option":"A","support":"e9"},"q2":{"option":"B","support":"e1"}}')).toMatchObject({
      ok: false,
      reason: 'support id "e9" is not an event of the window',
    });
    expect(bad('{"q1":{"option":"A","support":"e1","why":"x"},"q2":{"option":"B","support":"e1"}}')).toMatchObject({
      ok: false,
      reason: 'answer 1 is not {option, support}',
    });
  });

  it('reads answers without probabilities when the logprobs do not spell the content, rather than misplace them', () => {
    const r = parseJsonAnswers(content, logprobs.slice(1), CHOICES, QS);
    expect(r.ok && r.answers.map((a) => a.probabilities)).toEqual([null, null]);
    const spaced = parseJsonAnswers('{ "q1": { "option": "A", "support": "e2" }, "q2": {"support":"e1","option":"C"} }', null, CHOICES, QS);
    expect(spaced.ok && spaced.answers.map((a) => [a.option, a.support])).toEqual([
      ['yes', 'e2'],
      ['unsure', 'e1'],
    ]);
  });
});

describe('answer formats', () => {
  it('derives the schema from the battery and the window: one required property per question, letters and ids as enums', () => {
    const schema = answerSchema(SEMANTIC_QUESTIONS, CHOICES, optionLetter) as {
      required: string[];
      properties: Record<string, { properties: { option: { enum: string[] }; support: { enum: string[] } } }>;
    };
    expect(schema.required).toEqual(SEMANTIC_QUESTIONS.map((_, i) => `q${i + 1}`));
    expect(schema.properties.q3!.properties.option.enum).toEqual(['A', 'B', 'C', 'D']);
    expect(schema.properties.q8!.properties.support.enum).toEqual(CHOICES);
    expect(formatFields('lines', SEMANTIC_QUESTIONS, CHOICES, optionLetter)).toEqual({});
    expect(formatFields('json_object', SEMANTIC_QUESTIONS, CHOICES, optionLetter)).toEqual({ response_format: { type: 'json_object', schema } });
    expect(formatFields('json_schema', SEMANTIC_QUESTIONS, CHOICES, optionLetter)).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { strict: true, schema } },
    });
    const grammar = answerGrammar(SEMANTIC_QUESTIONS.slice(0, 1), ['e"1', 'unresolved'], optionLetter);
    expect(grammar).toBe(
      [
        'root ::= "{" a1 "}"',
        'support ::= "\\"e\\\\\\"1\\"" | "\\"unresolved\\""',
        'a1 ::= "\\"q1\\":{\\"option\\":" ("\\"A\\"" | "\\"B\\"" | "\\"C\\"" | "\\"D\\"") ",\\"support\\":" support "}"',
      ].join('\n'),
    );
  });

  it('a change of protocol changes the request contract and the evaluator identity; lines keeps the digests it always had', () => {
    const lines = JudgeClientSchema.parse({ model: 'm', answerFormat: 'lines' });
    const json = { ...lines, answerFormat: 'json_object' as const };
    expect(requestContractDigest(json)).not.toBe(requestContractDigest(lines));
    expect(evaluatorIdentity(json).digest).not.toBe(evaluatorIdentity(lines).digest);
    expect(evaluatorIdentity(lines).parts).not.toHaveProperty('answerFormat');
    expect(requestContractDigest({ ...lines, answerFormat: 'grammar' })).not.toBe(requestContractDigest(json));
  });

  it("the default is json_schema (chosen by measurement): a configuration that names no format is a new evaluator, so the old default's certificates retire", () => {
    const byDefault = JudgeClientSchema.parse({ model: 'm' });
    expect(byDefault.answerFormat).toBe('json_schema');
    const before = JudgeClientSchema.parse({ model: 'm', answerFormat: 'lines' });
    expect(evaluatorIdentity(byDefault).parts.answerFormat).toBe('json_schema');
    expect(evaluatorIdentity(byDefault).digest).not.toBe(evaluatorIdentity(before).digest);
    expect(requestContractDigest(byDefault)).not.toBe(requestContractDigest(before));
  });
});
