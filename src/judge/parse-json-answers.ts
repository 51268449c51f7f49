import { answerKey } from './answer-format.ts';
import { locatedAnswer, optionIndex, tokenOffsets, type AnswerParser, type ParsedAnswer } from './parse-answers.ts';
import { SEMANTIC_QUESTIONS } from './questions.ts';

/**
 * Read a structured reply (answer-format.ts): one JSON object with exactly the properties
 * `q1`…`qN`, each `{option, support}`, the option one of that question's letters and the support
 * one of the window's ids. Anything else refuses the whole reply, as `parseAnswers` does.
 *
 * Probabilities: the option's value is located in the content (the first character inside the
 * string that follows `"qN": {… "option":`), the logprob token covering that character is the one
 * that wrote the letter, and its listed alternatives give the options' probabilities,
 * renormalized over the letters the schema allows (`optionProbabilities` with `constrained`).
 * A reply whose option cannot be located (escaped keys, logprobs that do not spell the content)
 * has no probabilities, and so cannot act.
 */
export const parseJsonAnswers: AnswerParser = (content, logprobs, supportChoices, questions = SEMANTIC_QUESTIONS) => {
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    return { ok: false, reason: 'the reply is not JSON' };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { ok: false, reason: 'the reply is not a JSON object' };
  const record = json as Record<string, unknown>;
  const keys = questions.map((_, i) => answerKey(i));
  const extra = Object.keys(record).find((k) => !keys.includes(k));
  if (extra !== undefined) return { ok: false, reason: `property ${JSON.stringify(extra).slice(0, 40)} is not a question` };
  const offsets = tokenOffsets(content, logprobs);
  const answers: ParsedAnswer[] = [];
  for (let i = 0; i < questions.length; i++) {
    const q = questions[i]!;
    const value = record[keys[i]!];
    if (value === undefined) return { ok: false, reason: `no answer to question ${i + 1}` };
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: `answer ${i + 1} is not {option, support}` };
    const { option, support, ...rest } = value as Record<string, unknown>;
    if (Object.keys(rest).length > 0 || typeof option !== 'string' || typeof support !== 'string')
      return { ok: false, reason: `answer ${i + 1} is not {option, support}` };
    const index = optionIndex(q.options, option);
    if (index < 0) return { ok: false, reason: `option ${JSON.stringify(option).slice(0, 20)} is not a letter of question ${i + 1}` };
    if (!supportChoices.includes(support)) return { ok: false, reason: `support id ${JSON.stringify(support).slice(0, 60)} is not an event of the window` };
    answers.push(locatedAnswer(q, index, support, offsets, locate(content, keys[i]!, option, support), true));
  }
  return { ok: true, answers };
};

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Offsets of the option letter and the support id of one answer object, or null when not written plainly. */
function locate(content: string, key: string, option: string, support: string): { option: number; support: number } | null {
  const head = new RegExp(`"${escapeRegExp(key)}"\\s*:\\s*\\{`).exec(content);
  if (head === null) return null;
  const from = head.index + head[0].length;
  const close = content.indexOf('}', from);
  if (close < 0) return null;
  const body = content.slice(from, close);
  const o = new RegExp(`"option"\\s*:\\s*"${escapeRegExp(option)}"`).exec(body);
  const s = new RegExp(`"support"\\s*:\\s*"${escapeRegExp(JSON.stringify(support).slice(1, -1))}"`).exec(body);
  if (o === null || s === null) return null;
  return { option: from + o.index + o[0].length - 1 - option.length, support: from + s.index + s[0].length - 1 - JSON.stringify(support).slice(1, -1).length };
}
