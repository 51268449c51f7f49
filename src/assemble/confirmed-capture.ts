import { canonicalJson } from '../core/canonical-json.ts';
import { jsonDigest } from '../normalize/args-digest.ts';
import { parseJsonText } from '../normalize/json-text.ts';
import { parsePythonLiteral } from '../normalize/python-literal.ts';
import type { ToolArgs } from '../normalize/step.ts';

/**
 * A tool step's own arguments read again in the light of the LLM request it answers
 * (`linkRequests`), when the capture holds the requested call in a form that is the
 * instrumentation's, not the agent's. By shape, never by framework name, and only on
 * confirmation: the value read must equal the request's arguments (canonical JSON, so key
 * order and `1.0`/`1` do not matter, but `42` is not `"42"`). Two forms:
 *
 * - **wrapped**: the captured JSON object is a wrapper whose member (or an element of a member
 *   array) is the call, e.g. OpenLLMetry's LangChain callback envelope `{"input_str": ...,
 *   "tags": ..., "metadata": ..., "inputs": {...}, "kwargs": {"tool_call_id": ...}}` or a JS
 *   `(input, options)` argument list `{"input": {...}, "options": null}`. `raw` stays the
 *   capture; `parsed` and the digest become the inner arguments (`recorded: 'wrapped'`,
 *   `wrappedAt`), so a per-call id in the envelope does not split exact repetitions. A member
 *   that is text holding the call as JSON or a Python literal counts too (then `capturedAs`).
 * - **python-literal**: the captured text is not JSON but a Python literal (`str(kwargs)`,
 *   `{'city': 'Lisbon'}`) of the same value: the request's arguments are used
 *   (`source: 'request'`, the text kept as `captured`, `capturedAs: 'python-literal'`).
 *
 * `undefined` when neither applies, including when the capture already equals the request
 * (an agent that asked for `{"input": {...}}` itself keeps it). `requested.parsed` must be a
 * plain object. Pure.
 */
export function confirmedCapture(own: ToolArgs, requested: ToolArgs): ToolArgs | undefined {
  const want = canonicalJson(requested.parsed);
  if (own.parsed === undefined) {
    if (own.source === 'request') return undefined;
    const literal = parsePythonLiteral(own.raw);
    if (literal === undefined || canonicalJson(literal.value) !== want) return undefined;
    const args: ToolArgs = { ...requested, source: 'request', captured: own.raw, capturedAs: 'python-literal' };
    if (own.declared !== undefined) args.declared = own.declared;
    return args;
  }
  if (!isPlainObject(own.parsed) || own.source === 'request' || own.recorded === 'wrapped') return undefined;
  if (canonicalJson(own.parsed) === want) return undefined;
  const top = own.recorded === undefined ? own.parsed : parseJsonText(own.raw)?.value;
  if (!isPlainObject(top) || canonicalJson(top) === want) return undefined;
  const found = innerCall(top, want);
  if (found === undefined) return undefined;
  const args: ToolArgs = { raw: own.raw, parsed: found.value, recorded: 'wrapped', wrappedAt: found.at, digest: jsonDigest(found.value) };
  if (found.pythonLiteral) args.capturedAs = 'python-literal';
  if (own.declared !== undefined) args.declared = own.declared;
  return args;
}

interface Inner {
  at: string;
  value: unknown;
  pythonLiteral: boolean;
}

/**
 * The member of `wrapper` (in key order), or element of a member array, that is the call:
 * structured members first, then members that are text (`input_str` beside `inputs`).
 */
function innerCall(wrapper: Record<string, unknown>, want: string): Inner | undefined {
  for (const text of [false, true]) {
    for (const [key, member] of Object.entries(wrapper)) {
      const found = asCall(member, want, key, text);
      if (found !== undefined) return found;
      if (!Array.isArray(member)) continue;
      for (let i = 0; i < member.length && i < MAX_ELEMENTS; i++) {
        const element = asCall(member[i], want, `${key}[${i}]`, text);
        if (element !== undefined) return element;
      }
    }
  }
  return undefined;
}

function asCall(value: unknown, want: string, at: string, text: boolean): Inner | undefined {
  if (!text) return isPlainObject(value) && canonicalJson(value) === want ? { at, value, pythonLiteral: false } : undefined;
  if (typeof value !== 'string' || value.length > MAX_TEXT_CHARS) return undefined;
  const json = parseJsonText(value);
  if (json !== undefined) return isPlainObject(json.value) && canonicalJson(json.value) === want ? { at, value: json.value, pythonLiteral: false } : undefined;
  const literal = parsePythonLiteral(value);
  return literal !== undefined && isPlainObject(literal.value) && canonicalJson(literal.value) === want
    ? { at, value: literal.value, pythonLiteral: true }
    : undefined;
}

/** Bounds on what is searched in one wrapper: the elements of a member array, the text of a member read again. */
const MAX_ELEMENTS = 16;
const MAX_TEXT_CHARS = 65_536;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
