import { describe, expect, it } from 'vitest';
import { parseAnswers, type TokenLogprob } from '../../src/judge/parse-answers.ts';
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
