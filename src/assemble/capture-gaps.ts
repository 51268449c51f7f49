import type { RequestedToolCall, Step } from '../normalize/step.ts';
import { readClocks } from './clock-skew.ts';

/**
 * What the instrumentation failed to record in a trajectory. A capture gap is a limitation of
 * the capture, never a fault of the agent: no L0 candidate rests on one, and the claims of
 * absence it could falsify are not made while it stands.
 *
 * - `tool-name-not-captured`: a tool step with no tool name (OpenInference JS `traceTool`
 *   sets none).
 * - `tool-call-not-captured`: a tool call an LLM output requested with no tool step after it
 *   (the instrumentation does not trace that tool, or the span was lost). The llm step is the
 *   span concerned.
 * - `tool-args-not-captured`: a tool step with no arguments (GenAI without content capture).
 * - `tool-result-not-captured`: a tool step that did not fail and has no result.
 * - `unread-convention`: a step whose span looks like tool or model work in a convention
 *   trajwatch does not read (`Step.unreadConvention` names the hint, e.g. `mlflow.spanType=TOOL`):
 *   what it did is not in the step.
 * - `clock-skew`: spans whose timestamps contradict the span tree (`readClocks`: a child that
 *   starts before its parent, or one from another emitter outside its parent's interval). The
 *   skewed spans are concerned; the order of their steps relative to others is not known from
 *   their timestamps, so no claim that rests on order is made.
 *
 * Which checks each gap silences is declared in one table: each check's `hiddenBy` row
 * (`src/checks/capture-table.ts`).
 */
export type CaptureGapReason =
  | 'tool-name-not-captured'
  | 'tool-call-not-captured'
  | 'tool-args-not-captured'
  | 'tool-result-not-captured'
  | 'unread-convention'
  | 'clock-skew';

/** Every capture gap kind, in the order `captureGaps` lists them. */
export const CAPTURE_GAP_REASONS = [
  'tool-name-not-captured',
  'tool-call-not-captured',
  'tool-args-not-captured',
  'tool-result-not-captured',
  'unread-convention',
  'clock-skew',
] as const satisfies readonly CaptureGapReason[];

/** A way a complete capture can still be partial: the capture gap kinds. */
export type CaptureStateKind = CaptureGapReason;

/** What each gap kind says is missing: the sentence the docs and the manifest schema print. */
export const CAPTURE_GAP_TEXT: Readonly<Record<CaptureGapReason, string>> = {
  'tool-name-not-captured': "a tool step's tool name",
  'tool-call-not-captured': 'a tool call an LLM output requested, with no tool step after it',
  'tool-args-not-captured': "a tool step's arguments",
  'tool-result-not-captured': 'the result of a tool step that did not fail',
  'unread-convention': 'what a span that looks like tool or model work did, in a convention trajwatch does not read',
  'clock-skew': 'trustworthy order: span timestamps contradict the span tree',
};

export interface CaptureGap {
  reason: CaptureGapReason;
  /** The span ids concerned, in trajectory order. */
  spanIds: string[];
  /** `tool-call-not-captured`: the tool names the unanswered requests named, in order, once each. */
  toolNames?: string[];
  /** `unread-convention`: the hints the steps named (`Step.unreadConvention`), in order, once each. */
  conventions?: string[];
  /** `clock-skew`: the largest offset found, in nanoseconds (decimal; absolute value). */
  skewNs?: string;
}

/**
 * The tool calls a trajectory's capture may be missing: those of nameless tool steps, of steps
 * in a convention trajwatch does not read, and of requests without a name (`unnamed`: any
 * tool), and those requested by name with no tool
 * step (`names`). A claim that some call did not happen is unsupported exactly when a hidden
 * call could be that call: any call when one is unnamed, else a call of one of `names`.
 * Missing arguments hide only whether two calls were equal (repetition); a missing result
 * hides nothing a claim rests on: a result can only show a failure, and an unseen failure
 * makes a later attempt look successful, which silences "no later success" rather than
 * supporting it.
 */
export interface HiddenToolCalls {
  unnamed: boolean;
  names: ReadonlySet<string>;
}

/** A requested tool call no tool step answered: the index of the llm step that asked, and the name asked for. */
export interface MissingToolCall {
  llmIndex: number;
  name?: string;
}

interface Reading {
  gaps: CaptureGap[];
  hidden: HiddenToolCalls;
  missing: MissingToolCall[];
}

const memo = new WeakMap<readonly Step[], Reading>();

/**
 * The capture gaps of a trajectory's steps (in trajectory order), one entry per reason found,
 * in the order of `CAPTURE_GAP_REASONS`. Pure; computed once per steps array and shared: treat
 * the result as read-only.
 *
 * Requested tool calls are matched to later tool steps (started at or after the llm step
 * started), each tool step at most once, llm steps and their calls taken in order: by tool
 * call id when both the request and the tool step carry one, else by tool name (the first
 * unmatched such step). A request that finds no tool step is a `tool-call-not-captured` gap.
 */
export function captureGaps(steps: readonly Step[]): CaptureGap[] {
  return read(steps).gaps;
}

/**
 * Every requested tool call no tool step answered (the `tool-call-not-captured` gap, one entry
 * per request), in trajectory order of the llm steps that asked.
 */
export function missingToolCalls(steps: readonly Step[]): readonly MissingToolCall[] {
  return read(steps).missing;
}

/** Whether the steps' timestamps contradict their span tree (a `clock-skew` gap). */
export function hasClockSkew(steps: readonly Step[]): boolean {
  return readClocks(steps).skews.length > 0;
}

/** The tool calls the capture may be missing (see `HiddenToolCalls`). */
export function hiddenToolCalls(steps: readonly Step[]): HiddenToolCalls {
  return read(steps).hidden;
}

function read(steps: readonly Step[]): Reading {
  const known = memo.get(steps);
  if (known !== undefined) return known;
  const found = new Map<CaptureGapReason, string[]>();
  const add = (reason: CaptureGapReason, spanId: string) => {
    const ids = found.get(reason);
    if (ids === undefined) found.set(reason, [spanId]);
    else if (ids[ids.length - 1] !== spanId) ids.push(spanId);
  };
  let unnamed = false;
  const conventions = new Set<string>();
  for (const step of steps) {
    if (step.unreadConvention !== undefined) {
      add('unread-convention', step.id);
      conventions.add(step.unreadConvention);
      unnamed = true;
    }
    if (step.kind !== 'tool') continue;
    if (step.toolName === undefined || step.toolName.trim() === '') {
      add('tool-name-not-captured', step.id);
      unnamed = true;
    }
    if (step.args === undefined) add('tool-args-not-captured', step.id);
    if (step.result === undefined && step.error === undefined && step.statusCode !== 2) add('tool-result-not-captured', step.id);
  }
  const names = new Set<string>();
  const missing: MissingToolCall[] = [];
  let llmIndex = -1;
  matchRequestedToolCalls(steps, (llm, call, toolIndex) => {
    if (toolIndex !== undefined) return;
    if (steps[llmIndex] !== llm) llmIndex = steps.indexOf(llm, llmIndex + 1);
    missing.push(call.name === undefined ? { llmIndex } : { llmIndex, name: call.name });
    add('tool-call-not-captured', llm.id);
    if (call.name === undefined) unnamed = true;
    else names.add(call.name);
  });
  let skewNs = 0n;
  for (const skew of readClocks(steps).skews) {
    add('clock-skew', skew.spanId);
    const abs = skew.offsetNs < 0n ? -skew.offsetNs : skew.offsetNs;
    if (abs > skewNs) skewNs = abs;
  }
  const gaps: CaptureGap[] = [];
  for (const reason of CAPTURE_GAP_REASONS) {
    const spanIds = found.get(reason);
    if (spanIds === undefined) continue;
    const gap: CaptureGap = { reason, spanIds };
    if (reason === 'tool-call-not-captured' && names.size > 0) gap.toolNames = [...names];
    if (reason === 'unread-convention') gap.conventions = [...conventions];
    if (reason === 'clock-skew') gap.skewNs = skewNs.toString();
    gaps.push(gap);
  }
  const reading: Reading = { gaps, hidden: { unnamed, names }, missing };
  memo.set(steps, reading);
  return reading;
}

/**
 * Matches every requested tool call of the llm steps to a tool step (see `captureGaps` for the
 * rule), calling `onCall` for each request with the index of its tool step, or `undefined`.
 */
export function matchRequestedToolCalls(steps: readonly Step[], onCall: (llm: Step, call: RequestedToolCall, toolIndex: number | undefined) => void): void {
  let byId: CandidateQueues | undefined;
  let byName: CandidateQueues | undefined;
  const matched = new Set<number>();
  for (const llm of steps) {
    if (llm.kind !== 'llm' || llm.requestedToolCalls === undefined) continue;
    if (byId === undefined || byName === undefined) {
      byId = new CandidateQueues();
      byName = new CandidateQueues();
      steps.forEach((s, i) => {
        if (s.kind !== 'tool') return;
        if (s.toolCallId !== undefined) byId!.add(s.toolCallId, i);
        if (s.toolName !== undefined) byName!.add(s.toolName, i);
      });
    }
    // Steps are in start order, so a tool step that started before this llm step is too early
    // for every later one as well.
    const usable = (i: number) => !matched.has(i) && steps[i]!.startTimeUnixNano >= llm.startTimeUnixNano;
    for (const call of llm.requestedToolCalls) {
      let found = call.id === undefined ? undefined : byId.first(call.id, usable, () => true);
      if (found === undefined && call.name !== undefined) {
        found = byName.first(call.name, usable, (i) => call.id === undefined || steps[i]!.toolCallId === undefined);
      }
      if (found !== undefined) matched.add(found);
      onCall(llm, call, found);
    }
  }
}

/**
 * Tool step indexes by key (call id or tool name), in trajectory order. Entries no longer
 * usable (matched, or started before the current llm step) are dropped from the front, so
 * matching a whole trajectory stays close to linear.
 */
class CandidateQueues {
  readonly #queues = new Map<string, { items: number[]; head: number }>();

  add(key: string, index: number): void {
    const queue = this.#queues.get(key);
    if (queue === undefined) this.#queues.set(key, { items: [index], head: 0 });
    else queue.items.push(index);
  }

  /** The first usable index under `key` that `accepts`; unusable ones at the front are dropped. */
  first(key: string, usable: (i: number) => boolean, accepts: (i: number) => boolean): number | undefined {
    const queue = this.#queues.get(key);
    if (queue === undefined) return undefined;
    while (queue.head < queue.items.length && !usable(queue.items[queue.head]!)) queue.head++;
    for (let k = queue.head; k < queue.items.length; k++) {
      const i = queue.items[k]!;
      if (usable(i) && accepts(i)) return i;
    }
    return undefined;
  }
}
