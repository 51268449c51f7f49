import { toToolArgs } from '../normalize/tool-args.ts';
import type { RequestedToolCall, Step, ToolArgs } from '../normalize/step.ts';
import { matchRequestedToolCalls } from './capture-gaps.ts';
import { confirmedCapture } from './confirmed-capture.ts';

/**
 * What a trajectory's LLM requests tell about the tool steps that answer them, applied to
 * copies of those steps (the steps given are not changed: the assembler keeps them for late
 * spans and compares them byte for byte). Requests are matched to tool steps as for capture
 * gaps (`matchRequestedToolCalls`: call id, else tool name in order). For a matched step:
 *
 * - **call id**: a step whose span carries none gets the request's id, `toolCallIdSource:
 *   'request'`.
 * - **arguments**: a step whose own arguments are absent or not a structured object (text that
 *   does not parse, a JSON scalar or array: instrumentations record a one-argument call as the
 *   bare value, LangGraph `Paris`, LangChain.js `42`) gets the request's arguments when they
 *   parse to an object, `args.source: 'request'`, its own text kept as `args.captured`. A step
 *   whose own arguments are an object keeps them: the capture wins. A match by tool name alone
 *   is used only when it is unambiguous: every request of that tool name that the step could
 *   answer (asked no later than the step started, not matched by id, and not matched to a
 *   step that started before it) asks for the same arguments. And the step's own text must not
 *   contradict the request: each scalar argument it names appears in that text (see
 *   `notContradicted`). Otherwise nothing is derived.
 * - **capture artefacts**: own arguments that hold the request's arguments in the
 *   instrumentation's form — inside a framework's wrapper (`recorded: 'wrapped'`), or as a
 *   Python literal instead of JSON (`capturedAs: 'python-literal'`) — are read as that call
 *   (`confirmedCapture`), by call id or position alike: equality with the request is the
 *   confirmation. This comes first, and applies to a step whose own arguments are an object.
 *
 * Returns `steps` itself when nothing changes. Pure.
 */
export function linkRequests(steps: Step[]): Step[] {
  const matches: Match[] = [];
  matchRequestedToolCalls(steps, (llm, call, toolIndex) => {
    const requested = requestedArgs(call);
    matches.push({ llm, call, toolIndex, requested, byId: toolIndex !== undefined && call.id !== undefined && steps[toolIndex]!.toolCallId === call.id });
  });
  let linked: Step[] | undefined;
  const agreeing = namesAskingOneCall(matches);
  for (const m of matches) {
    if (m.toolIndex === undefined) continue;
    const tool = steps[m.toolIndex]!;
    const changes: Partial<Step> = {};
    if (tool.toolCallId === undefined && m.call.id !== undefined) {
      changes.toolCallId = m.call.id;
      changes.toolCallIdSource = 'request';
    }
    const confirmed = tool.args !== undefined && m.requested !== undefined ? confirmedCapture(tool.args, m.requested) : undefined;
    if (confirmed !== undefined) {
      changes.args = confirmed;
    } else if (
      needsArgs(tool.args) &&
      m.requested !== undefined &&
      (m.byId || agreeing.has(m.call.name!) || unambiguous(m, matches, steps)) &&
      notContradicted(tool.args, m.requested)
    ) {
      changes.args = derivedArgs(m.requested, tool.args);
    }
    if (changes.toolCallId === undefined && changes.args === undefined) continue;
    linked ??= [...steps];
    linked[m.toolIndex] = { ...tool, ...changes };
  }
  for (const [index, args] of confirmedByUnanswered(matches, steps)) {
    linked ??= [...steps];
    linked[index] = { ...steps[index]!, args };
  }
  return linked ?? steps;
}

/**
 * Capture artefacts on tool steps no request was matched to, confirmed by a request no tool
 * step was matched to: same tool name, asked no later than the step started, and equal
 * arguments (`confirmedCapture`). This is the case of a span whose call id is not the model's
 * (OpenLIT's LangChain callback keeps LangChain's run id on a tool that raised), which no
 * request can match by id and the name rule skips because the span has an id. Only the
 * arguments are read; the step keeps its own id and the request stays unanswered
 * (`tool-call-not-captured`), since which call the step answered is still not known.
 */
function confirmedByUnanswered(matches: readonly Match[], steps: readonly Step[]): Map<number, ToolArgs> {
  const found = new Map<number, ToolArgs>();
  const answered = new Set<number>();
  for (const m of matches) if (m.toolIndex !== undefined) answered.add(m.toolIndex);
  for (const m of matches) {
    if (m.toolIndex !== undefined || m.requested === undefined || m.call.name === undefined) continue;
    for (let i = 0; i < steps.length; i++) {
      const tool = steps[i]!;
      if (tool.kind !== 'tool' || tool.toolName !== m.call.name || tool.args === undefined || answered.has(i) || found.has(i)) continue;
      if (tool.startTimeUnixNano < m.llm.startTimeUnixNano) continue;
      const args = confirmedCapture(tool.args, m.requested);
      if (args === undefined) continue;
      found.set(i, args);
      break;
    }
  }
  return found;
}

interface Match {
  llm: Step;
  call: RequestedToolCall;
  toolIndex: number | undefined;
  /** The request's arguments when they parse to an object. */
  requested: ToolArgs | undefined;
  byId: boolean;
}

function requestedArgs(call: RequestedToolCall): ToolArgs | undefined {
  if (call.arguments === undefined) return undefined;
  const args = toToolArgs(call.arguments);
  return isPlainObject(args.parsed) ? args : undefined;
}

/** A step's own arguments give no call to read: absent, unparsed text, a scalar or an array. */
function needsArgs(args: ToolArgs | undefined): boolean {
  return args === undefined || !isPlainObject(args.parsed);
}

/**
 * The span's own text does not contradict the request: each scalar argument the request names
 * appears in it (a bare `Paris` for `{"city": "Paris"}`; booleans in any case, for Python's
 * `True`). A request the step was paired with by position alone, while the step's real request
 * went unrecorded, shows here as a different value. Nothing to contradict when the span has no
 * arguments.
 */
function notContradicted(own: ToolArgs | undefined, requested: ToolArgs): boolean {
  if (own === undefined) return true;
  const text = own.raw;
  for (const value of Object.values(requested.parsed as Record<string, unknown>)) {
    if (typeof value === 'string' || typeof value === 'number') {
      if (!text.includes(String(value))) return false;
    } else if (typeof value === 'boolean') {
      if (!text.toLowerCase().includes(String(value))) return false;
    }
  }
  return true;
}

function derivedArgs(requested: ToolArgs, own: ToolArgs | undefined): ToolArgs {
  const args: ToolArgs = { ...requested, source: 'request' };
  if (own !== undefined) {
    args.captured = own.raw;
    if (own.declared !== undefined) args.declared = own.declared;
  }
  return args;
}

/** Tool names whose requests not matched by id all ask for the same arguments: never ambiguous. */
function namesAskingOneCall(matches: readonly Match[]): Set<string> {
  const digests = new Map<string, string | null>();
  for (const m of matches) {
    if (m.byId || m.call.name === undefined) continue;
    const digest = m.requested?.digest ?? null;
    const seen = digests.get(m.call.name);
    if (seen === undefined) digests.set(m.call.name, digest);
    else if (seen !== digest) digests.set(m.call.name, null);
  }
  const names = new Set<string>();
  for (const [name, digest] of digests) if (digest !== null) names.add(name);
  return names;
}

/**
 * Whether every other request the matched step could answer asks for the same arguments (see
 * `linkRequests`). A request without parsed arguments could be any call, so it disagrees.
 */
function unambiguous(m: Match, matches: readonly Match[], steps: readonly Step[]): boolean {
  const start = steps[m.toolIndex!]!.startTimeUnixNano;
  for (const other of matches) {
    if (other === m || other.byId || other.call.name !== m.call.name) continue;
    if (other.llm.startTimeUnixNano > start) continue;
    if (other.toolIndex !== undefined && steps[other.toolIndex]!.startTimeUnixNano < start) continue;
    if (other.requested?.digest !== m.requested!.digest) return false;
  }
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
