import { LongText, type Text, textOf } from '../ingest/long-text.ts';
import type { Attributes, AttrValue, Span, SpanEvent } from '../ingest/span.ts';
import type { Step } from './step.ts';

/**
 * The two ends of a step's long texts. The mappers read attributes as strings (decoded here,
 * once, for the mapping only: those strings die young); the step they make keeps each long
 * text it copied as the `LongText` it came from, and the span's attributes as decoded, so
 * what an open trajectory holds on the heap is references. A closed trajectory's steps get
 * their strings back (`withTexts`): the checks, windows, judge and logs read strings.
 */

/** The decoded strings of one span's long values, each with the `LongText` it came from. */
type Decoded = Map<string, LongText>;

/**
 * `span` with every `LongText` decoded to its string (the same object when it holds none),
 * and what was decoded. Span events' attributes too: content events carry the text. Span
 * attributes whose key `unread` names stay references: no mapper reads their value (only
 * whether they are there), so their text is never decoded.
 */
export function decodedSpan(span: Span, unread?: (key: string) => boolean): { span: Span; decoded: Decoded | undefined } {
  let decoded: Decoded | undefined;
  const attributes = decodedAttributes(span.attributes, () => (decoded ??= new Map()), unread);
  let events: SpanEvent[] | undefined;
  for (let i = 0; i < span.events.length; i++) {
    const event = span.events[i]!;
    const eventAttributes = decodedAttributes(event.attributes, () => (decoded ??= new Map()));
    if (eventAttributes === event.attributes) continue;
    events ??= span.events.slice();
    events[i] = { ...event, attributes: eventAttributes };
  }
  if (decoded === undefined) return { span, decoded };
  return { span: { ...span, attributes, ...(events === undefined ? {} : { events }) }, decoded };
}

/**
 * A step made from `decodedSpan(span)`: its attributes are the span's own again (long values
 * by reference), and an `input` or `result` that is one of the decoded strings is its
 * `LongText` (the same object the decode made: an identity test, no comparison of text).
 */
export function referToTexts(step: Step, original: Span, decoded: Decoded | undefined): Step {
  if (decoded === undefined) return step;
  step.attributes = original.attributes;
  if (typeof step.input === 'string') step.input = referenced(step.input, decoded);
  if (typeof step.result === 'string') step.result = referenced(step.result, decoded);
  return step;
}

/** The reference a decoded string came from (summarized now, while its string is at hand), or the string. */
function referenced(text: string, decoded: Decoded): Text {
  const long = decoded.get(text);
  if (long === undefined) return text;
  long.summarize(text);
  return long;
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

/** `attributes` with its `LongText`s (at any depth) decoded; the same object when it holds none. */
function decodedAttributes(attributes: Attributes, record: () => Decoded, unread?: (key: string) => boolean): Attributes {
  let out: Attributes | undefined;
  for (const key in attributes) {
    const value = attributes[key]!;
    if (value instanceof LongText && unread?.(key) === true) continue;
    const decoded = decodedValue(value, record);
    if (decoded === value) continue;
    out ??= { ...attributes };
    out[key] = decoded;
  }
  return out ?? attributes;
}

function decodedValue(value: AttrValue, record: () => Decoded): AttrValue {
  if (value instanceof LongText) {
    const text = value.toString();
    record().set(text, value);
    return text;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: AttrValue[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const decoded = decodedValue(value[i]!, record);
      if (decoded === value[i]) continue;
      out ??= value.slice();
      out[i] = decoded;
    }
    return out ?? value;
  }
  return decodedAttributes(value, record);
}
