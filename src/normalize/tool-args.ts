import type { AttrValue } from '../ingest/span.ts';
import { jsonDigest, textDigest } from './canonical-json.ts';
import { parseJsonText } from './json-text.ts';
import type { ArgsFormat, ToolArgs } from './step.ts';

/**
 * Tool-call arguments from one attribute value. A string is kept exactly as `raw` and parsed
 * when it is JSON; a structured AnyValue (object, array, number...) is serialized once for
 * `raw` and used directly as `parsed`, without a second parse. `declared` is the format the
 * instrumentation declares for the attribute it came from, if any (see `ToolArgs.declared`).
 *
 * @example toToolArgs('{"q": 1}') // { raw: '{"q": 1}', parsed: { q: 1 }, digest: jsonDigest({ q: 1 }) }
 */
export function toToolArgs(value: AttrValue, declared?: ArgsFormat): ToolArgs {
  let args: ToolArgs;
  if (typeof value === 'string') {
    const parsed = parseJsonText(value);
    args =
      parsed === undefined
        ? { raw: value, digest: textDigest(value) }
        : { raw: value, parsed: parsed.value, digest: jsonDigest(parsed.value) };
  } else {
    args = { raw: JSON.stringify(value), parsed: value, digest: jsonDigest(value) };
  }
  if (declared !== undefined) args.declared = declared;
  return args;
}
