import type { AttrValue } from '../ingest/span.ts';
import { jsonDigest, textDigest } from './canonical-json.ts';
import { parseJsonText } from './json-text.ts';
import type { ToolArgs } from './step.ts';

/**
 * Tool-call arguments from one attribute value. A string is kept exactly as `raw` and parsed
 * when it is JSON; a structured AnyValue (object, array, number...) is serialized once for
 * `raw` and used directly as `parsed`, without a second parse.
 *
 * @example toToolArgs('{"q": 1}') // { raw: '{"q": 1}', parsed: { q: 1 }, digest: jsonDigest({ q: 1 }) }
 */
export function toToolArgs(value: AttrValue): ToolArgs {
  if (typeof value === 'string') {
    const parsed = parseJsonText(value);
    return parsed === undefined
      ? { raw: value, digest: textDigest(value) }
      : { raw: value, parsed: parsed.value, digest: jsonDigest(parsed.value) };
  }
  return { raw: JSON.stringify(value), parsed: value, digest: jsonDigest(value) };
}
