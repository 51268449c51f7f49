import type { AnswerOption, SemanticQuestion } from './questions.ts';
import { SEMANTIC_QUESTIONS } from './questions.ts';
import { optionLetter } from './prompt.ts';

/** One token of a Chat Completions `logprobs.content` list. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  top_logprobs?: { token: string; logprob: number }[];
}

export interface ParsedAnswer {
  questionId: string;
  option: AnswerOption;
  /** An event id of the window or `unresolved`. */
  support: string;
  probabilities: Partial<Record<AnswerOption, number>> | null;
  /** Upper bound on the probability of an option absent from the top logprobs. */
  unseenBound?: number;
  /** Probability of the tokens that wrote the support id (the chosen path); null without logprobs. */
  supportProbability?: number | null;
}

export type ParseOutcome = { ok: true; answers: ParsedAnswer[] } | { ok: false; reason: string };

/**
 * A reader of the judge's reply in one answer format (`parseAnswers` for lines,
 * `parseJsonAnswers` for structured output). `questions`: the battery asked, in its numbering
 * (the trace questions unless a layer's); `supportChoices`: the ids a support may name.
 */
export type AnswerParser = (
  content: string,
  logprobs: TokenLogprob[] | null,
  supportChoices: readonly string[],
  questions?: readonly SemanticQuestion[],
) => ParseOutcome;

const LINE = /^\s*(\d+)\s*[:.)]\s*([A-Za-z])\s*\|\s*([A-Za-z0-9_-]+)\s*$/;
const LETTER_PREFIX = /^\s*\d+\s*[:.)]\s*/;

/**
 * Read the judge's reply. Anything but exactly one valid line per question, each with one of
 * that question's letters and one of the allowed support ids, is garbage: the whole reply is
 * refused rather than partly believed. Probabilities come from `logprobs` when given.
 */
export const parseAnswers: AnswerParser = (content, logprobs, supportChoices, questions = SEMANTIC_QUESTIONS) => {
  const offsets = tokenOffsets(content, logprobs);
  const answers: (ParsedAnswer | undefined)[] = [];
  let lineStart = 0;
  for (const rawLine of content.split('\n')) {
    const start = lineStart;
    lineStart += rawLine.length + 1;
    const text = rawLine.replace(/\r$/, '');
    if (text.trim() === '') continue;
    const m = LINE.exec(text);
    if (m === null) return { ok: false, reason: 'a line is not "<n>: <letter> | <event id>"' };
    const n = Number(m[1]);
    const q = questions[n - 1];
    if (q === undefined || answers[n - 1] !== undefined) return { ok: false, reason: `question number ${m[1]} unknown or repeated` };
    const letter = m[2]!.toUpperCase();
    const index = optionIndex(q.options, letter);
    if (index < 0) return { ok: false, reason: `letter ${letter} is not an option of question ${n}` };
    if (!supportChoices.includes(m[3]!)) return { ok: false, reason: `support id ${m[3]} is not an event of the window` };
    const at = { option: start + LETTER_PREFIX.exec(text)![0].length, support: start + text.lastIndexOf(m[3]!) };
    answers[n - 1] = locatedAnswer(q, index, m[3]!, offsets, at);
  }
  for (let i = 0; i < questions.length; i++) {
    if (answers[i] === undefined) return { ok: false, reason: `no answer to question ${i + 1}` };
  }
  return { ok: true, answers: answers as ParsedAnswer[] };
};

/** The index of the option `letter` names among `options` (A, B, …), or -1. */
export function optionIndex(options: readonly AnswerOption[], letter: string): number {
  return options.findIndex((_, k) => optionLetter(k) === letter);
}

/**
 * One answer as read from the reply, option `index` of `q` with its support id: probabilities
 * from the tokens at the letter's offset (`at.option`) and the support id's (`at.support`);
 * none when there are no usable logprobs or the answer's place in the reply is unknown (null).
 * `constrained`: see `optionProbabilities`.
 */
export function locatedAnswer(
  q: SemanticQuestion,
  index: number,
  support: string,
  offsets: Located[] | null,
  at: { option: number; support: number } | null,
  constrained = false,
): ParsedAnswer {
  const known = at === null ? null : offsets;
  return {
    questionId: q.id,
    option: q.options[index]!,
    support,
    ...optionProbabilities(known, at?.option ?? 0, q.options, constrained),
    supportProbability: pathProbability(known, at?.support ?? 0, (at?.support ?? 0) + support.length),
  };
}

/**
 * The probability of the tokens covering [from, to) of the content: the product of their own
 * probabilities. Exact for the id that was written; the alternatives a server lists are per
 * token, and an event id may span several, so no probability is claimed for ids not chosen.
 */
export function pathProbability(offsets: Located[] | null, from: number, to: number): number | null {
  if (offsets === null) return null;
  let p = 1;
  let covered = false;
  for (const l of offsets) {
    const end = l.start + l.token.token.length;
    if (end <= from || l.start >= to) continue;
    p *= Math.exp(l.token.logprob);
    covered = true;
  }
  return covered ? p : null;
}

export interface Located {
  start: number;
  token: TokenLogprob;
}

/** Token start offsets, or null when there are no logprobs or they do not spell the content. */
export function tokenOffsets(content: string, logprobs: TokenLogprob[] | null): Located[] | null {
  if (logprobs === null || logprobs.length === 0) return null;
  const out: Located[] = [];
  let at = 0;
  for (const token of logprobs) {
    if (typeof token.token !== 'string' || typeof token.logprob !== 'number') return null;
    out.push({ start: at, token });
    at += token.token.length;
  }
  return out.map((l) => l.token.token).join('') === content ? out : null;
}

/**
 * Probabilities of each option at the answer letter's position: the alternatives the server
 * listed for the token that writes the letter, read after that token's own prefix.
 *
 * `constrained`: the server decoded under a schema or grammar that allowed only the option
 * letters here, yet (llama.cpp) lists the model's *unconstrained* alternatives (`yes` ahead of
 * `A`). The sampled distribution is the unconstrained one restricted to the allowed letters and
 * renormalized, so each listed option's mass is divided by the listed options' total; an option
 * outside the top-k had at most the unconstrained bound `b`, so at most `b / (listed + b)` after.
 */
export function optionProbabilities(
  offsets: Located[] | null,
  letterAt: number,
  options: readonly AnswerOption[],
  constrained = false,
): Pick<ParsedAnswer, 'probabilities' | 'unseenBound'> {
  if (offsets === null) return { probabilities: null };
  const located = offsets.find((l) => l.start <= letterAt && letterAt < l.start + l.token.token.length);
  if (located === undefined) return { probabilities: null };
  const prefix = located.token.token.slice(0, letterAt - located.start);
  const alternatives = located.token.top_logprobs ?? [];
  const candidates = alternatives.some((a) => a.token === located.token.token)
    ? alternatives
    : [...alternatives, { token: located.token.token, logprob: located.token.logprob }];
  const probabilities: Partial<Record<AnswerOption, number>> = {};
  let listed = 0;
  let lowest = 1;
  for (const c of candidates) {
    const p = Math.exp(c.logprob);
    listed += p;
    if (p < lowest) lowest = p;
    if (!c.token.startsWith(prefix)) continue;
    const rest = c.token.slice(prefix.length).trimStart();
    if (rest.length === 0 || (rest.length > 1 && /[A-Za-z0-9]/.test(rest[1]!))) continue;
    const index = optionIndex(options, rest[0]!.toUpperCase());
    if (index < 0) continue;
    const option = options[index]!;
    probabilities[option] = (probabilities[option] ?? 0) + p;
  }
  // An option not listed had at most the lowest listed probability, and at most what is left.
  const unseen = Math.max(0, Math.min(lowest, 1 - listed));
  if (!constrained) return { probabilities, unseenBound: unseen };
  const allowed = Object.values(probabilities).reduce((a, p) => a + p, 0);
  if (allowed === 0) return { probabilities: {}, unseenBound: 1 };
  const renormalized: Partial<Record<AnswerOption, number>> = {};
  for (const [o, p] of Object.entries(probabilities) as [AnswerOption, number][]) renormalized[o] = p / allowed;
  return { probabilities: renormalized, unseenBound: unseen / (allowed + unseen) };
}
