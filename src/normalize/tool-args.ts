import type { AttrValue } from '../ingest/span.ts';
import { jsonDigest, textDigest } from './args-digest.ts';
import { parseJsonText } from './json-text.ts';
import { readRecordedCall } from './recorded-call.ts';
import type { ArgsFormat, ToolArgs } from './step.ts';

/**
 * Tool-call arguments from one attribute value. A string is kept exactly as `raw` and parsed
 * when it is JSON; a structured AnyValue (object, array, number...) is serialized once for
 * `raw` and used directly as `parsed`, without a second parse. A recorded call with no
 * positional arguments (`readRecordedCall`) is read as its keyword arguments (`recorded:
 * 'kwargs'`), digest included. `declared` is the format the instrumentation declares for the
 * attribute it came from, if any (see `ToolArgs.declared`).
 *
 * @example toToolArgs('{"q": 1}') // { raw: '{"q": 1}', parsed: { q: 1 }, digest: jsonDigest({ q: 1 }) }
 * @example toToolArgs('{"args": [], "kwargs": {"q": 1}}') // { raw: ..., parsed: { q: 1 }, recorded: 'kwargs', digest: jsonDigest({ q: 1 }) }
 */
export function toToolArgs(value: AttrValue, declared?: ArgsFormat): ToolArgs {
  let raw: string;
  let parsed: unknown;
  if (typeof value === 'string') {
    raw = value;
    const json = parseJsonText(value);
    if (json === undefined) return withDeclared({ raw, digest: textDigest(value) }, declared);
    parsed = json.value;
  } else {
    raw = JSON.stringify(value);
    parsed = value;
  }
  const call = readRecordedCall(parsed);
  const args: ToolArgs =
    call?.shape === 'kwargs' ? { raw, parsed: call.kwargs, recorded: 'kwargs', digest: jsonDigest(call.kwargs) } : { raw, parsed, digest: jsonDigest(parsed) };
  return withDeclared(args, declared);
}

function withDeclared(args: ToolArgs, declared: ArgsFormat | undefined): ToolArgs {
  if (declared !== undefined) args.declared = declared;
  return args;
}
