import { LongText, type Text, textOf } from '../ingest/long-text.ts';
import type { Attributes, Span } from '../ingest/span.ts';
import type { Step } from './step.ts';

/**
 * The two ends of a step's long texts. The mappers read attributes as strings (decoded here,
 * once, for the mapping only: those strings die young); the step they make keeps each long
 * text it copied as the `LongText` it came from, and the span's attributes as references, so
 * what an open trajectory holds on the heap is references. A closed trajectory's steps get
 * their strings back (`withTexts`): the checks, windows, judge and logs read strings.
 */

/**
 * What one span's long values were decoded to, for the mapping: where each was, its
 * `LongText`, and the string put there in its place.
 */
export type DecodedTexts = { container: Attributes; key: string; text: LongText; string: string }[];

/**
 * Decodes `span`'s `LongText`s in place (span and span-event attribute values; the decoder
 * makes none inside arrays and kvlists), so
 * the mappers read strings; `undefined` when it holds none. Attributes whose key `unread`
 * names stay references: no mapper reads their value (only whether they are there), so their
 * text is never decoded. In place rather than a copy: an agent span's attributes run to
 * hundreds of keys, and {@link restoreTexts} puts every reference back before anything else
 * sees the span.
 */
export function decodeTexts(span: Span, unread?: (key: string) => boolean): DecodedTexts | undefined {
  let decoded: DecodedTexts | undefined;
  const record = (): DecodedTexts => (decoded ??= []);
  decodeAttributes(span.attributes, record, unread);
  for (const event of span.events) decodeAttributes(event.attributes, record);
  return decoded;
}

/** Puts every reference {@link decodeTexts} decoded back where it was. */
export function restoreTexts(decoded: DecodedTexts): void {
  for (const { container, key, text } of decoded) container[key] = text;
}

/**
 * A step made from a span decoded by {@link decodeTexts}: an `input` or `result` that is one
 * of the decoded strings becomes its `LongText` (summarized now, while the string is at hand).
 * Its attributes are the span's, references again once restored.
 */
export function referToTexts(step: Step, decoded: DecodedTexts | undefined): Step {
  if (decoded === undefined) return step;
  if (typeof step.input === 'string') step.input = referenced(step.input, decoded);
  if (typeof step.result === 'string') step.result = referenced(step.result, decoded);
  return step;
}

/**
 * The reference `text` was decoded from. A mapper copies the string it read, and `===` on the
 * same string is a pointer test, where a map would hash the whole text; an equal string a
 * mapper built anew compares equal too, and is the same text.
 */
function referenced(text: string, decoded: DecodedTexts): Text {
  for (const d of decoded) {
    if (d.string.length !== text.length || d.string !== text) continue;
    d.text.summarize(text);
    return d.text;
  }
  return text;
}

function decodeAttributes(attributes: Attributes, record: () => DecodedTexts, unread?: (key: string) => boolean): void {
  for (const key in attributes) {
    const value = attributes[key]!;
    if (value instanceof LongText) {
      if (unread?.(key) !== true) decodeAt(attributes, key, value, record());
    }
  }
}

function decodeAt(container: Attributes, key: string, text: LongText, decoded: DecodedTexts): void {
  const string = text.toString();
  decoded.push({ container, key, text, string });
  container[key] = string;
}

/**
 * The steps with their texts as strings, for the analysis of a closed trajectory: a step
 * holding a `LongText` is copied, the others are shared. An llm step's `input` (the prompt:
 * the whole conversation so far, the longest text there is) stays a reference: no check reads
 * it, the trajectory log leaves it out by default, and a window that shows it decodes it then.
 */
export function withTexts(steps: Step[]): Step[] {
  let out: Step[] | undefined;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    const input = step.kind !== 'llm' && step.input instanceof LongText;
    if (!(input || step.result instanceof LongText)) continue;
    out ??= steps.slice();
    const copy = { ...step };
    if (input) copy.input = textOf(copy.input);
    if (copy.result !== undefined) copy.result = textOf(copy.result);
    out[i] = copy;
  }
  return out ?? steps;
}
