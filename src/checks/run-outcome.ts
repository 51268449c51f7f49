import { isText, textOf } from '../ingest/long-text.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import { readAnswer, type AnswerReading } from './message-shape.ts';
import type { StepFailure } from './step-failure.ts';

/** Where a run's answer was read. */
export type AnswerSource = 'final_result' | 'agent-output' | 'root-output' | 'last-llm-output';

/** Why a run's outcome cannot be read: a named capture limitation, never a guess. */
export type OutcomeAbsence = 'no-output-captured' | 'tool-calls-pending' | 'no-final-assistant-message' | 'empty' | 'run-failed';

/**
 * One agent run: the steps of one trace — the subtree of its root, and of any other top step
 * (a step whose parent is not in the trajectory: its parent was never exported). In a session
 * every turn is its own trace and so its own run. Several agent steps under one top step — graph
 * nodes named `agent` (LangGraph), one agent span per handoff (OpenAI Agents SDK), the agents
 * of a crew — are parts of that one run, not runs of their own.
 */
export interface AgentRun {
  /** Index in `t.steps` of the top step. */
  top: number;
  /** Indexes of every step of the run (the top step included), in trajectory order. */
  steps: number[];
  /**
   * The step that stands for the run: the last-ending agent step with no agent above it in
   * the run, else the top step.
   */
  final: number;
  /** When the run ended: the later end of its top and final steps. */
  endUnixNano: bigint;
  /** Whether the run itself failed (its top or final step). */
  failed: boolean;
  /** The answer to the user, when the capture shows one. */
  outcome: { kind: 'answer'; text: string; from: number; source: AnswerSource } | { kind: 'absent'; reason: OutcomeAbsence };
}

/** The runs of a trajectory, and for each step index the run it belongs to (-1: none). */
export interface AgentRuns {
  runs: AgentRun[];
  runOf: number[];
  /** Per step index: whether an agent step lies above it in its run (a delegated agent, for agent steps). */
  underAgent: boolean[];
}

const memo = new WeakMap<Trajectory, { failures: readonly (StepFailure | undefined)[]; runs: AgentRuns }>();

/**
 * The agent runs of a trajectory and their outcomes, read once per trajectory and failure
 * reading. "The run reported success" means: the run did not fail and its answer can be read.
 * The answer is read, first readable wins, from
 * 1. `final_result` on the final or top step (Pydantic AI puts its answer there);
 * 2. the top step's output, by shape (`readAnswer`: a LangGraph root's whole message state →
 *    its last assistant message; a crew's or workflow's result → its answer field);
 * 3. the final agent step's output, by shape (the top is a wrapper that records none);
 * 4. the last-ending llm step of the run, by shape, when no tool step of the run started after
 *    it (the OpenAI Agents SDK's agent span carries no output; the model's last reply is the
 *    answer).
 * Nothing readable: the outcome is `absent` with the reason, and claims that rest on the run
 * reporting success are not made.
 */
export function agentRuns(t: Trajectory, failures: readonly (StepFailure | undefined)[]): AgentRuns {
  const known = memo.get(t);
  if (known !== undefined && known.failures === failures) return known.runs;
  const runs = readRuns(t, failures);
  memo.set(t, { failures, runs });
  return runs;
}

function readRuns(t: Trajectory, failures: readonly (StepFailure | undefined)[]): AgentRuns {
  const oneTrace = t.traceIds.length <= 1;
  const keyOf = (traceId: string, spanId: string) => (oneTrace ? spanId : `${traceId}/${spanId}`);
  const indexById = new Map<string, number>();
  t.steps.forEach((s, i) => {
    const key = keyOf(s.traceId, s.id);
    if (!indexById.has(key)) indexById.set(key, i);
  });
  const parentOf = t.steps.map((s) => (s.parentId === undefined ? -1 : (indexById.get(keyOf(s.traceId, s.parentId)) ?? -1)));

  // Top step of each step, and whether an agent step lies strictly above it in its run.
  const topOf: number[] = new Array<number>(t.steps.length).fill(-2);
  const agentAbove: boolean[] = new Array<boolean>(t.steps.length).fill(false);
  const resolve = (i: number): number => {
    const chain: number[] = [];
    let at = i;
    // A parent cycle (a malformed capture) ends the walk at the step where it closes.
    const onChain = new Set<number>();
    while (topOf[at] === -2 && parentOf[at]! >= 0 && !onChain.has(at)) {
      onChain.add(at);
      chain.push(at);
      at = parentOf[at]!;
    }
    if (topOf[at] === -2) {
      topOf[at] = at;
      agentAbove[at] = false;
    }
    for (let k = chain.length - 1; k >= 0; k--) {
      const s = chain[k]!;
      const p = parentOf[s]!;
      topOf[s] = topOf[p]!;
      agentAbove[s] = agentAbove[p]! || t.steps[p]!.kind === 'agent';
    }
    return topOf[i]!;
  };

  t.steps.forEach((_, i) => resolve(i));
  const hostOf = hostTops(t, topOf);
  const byTop = new Map<number, number[]>();
  const runOf: number[] = [];
  t.steps.forEach((_, i) => {
    const hosted = hostOf.get(topOf[i]!);
    const top = hosted?.host ?? topOf[i]!;
    // An enclosing agent top is above the hosted subtree, as its lost parent chain would be.
    if (hosted?.enclosed === true && t.steps[top]!.kind === 'agent') agentAbove[i] = true;
    const list = byTop.get(top);
    if (list === undefined) byTop.set(top, [i]);
    else list.push(i);
  });
  const runs: AgentRun[] = [];
  for (const [top, steps] of [...byTop.entries()].sort(([a], [b]) => a - b)) {
    const run = readRun(t, failures, top, steps, agentAbove);
    for (const i of steps) runOf[i] = runs.length;
    runs.push(run);
  }
  return { runs, runOf, underAgent: agentAbove };
}

/**
 * The top steps of one trace beyond its first, mapped to that first one (its root when seen,
 * else the earliest to start, the longest on a tie), with whether it encloses them in time. A trace has one root:
 * further top steps are subtrees whose parent was never exported, or an exporter lost the
 * parenting, and they ran in the trace's run. Different traces (the turns of a session) never
 * join.
 */
function hostTops(t: Trajectory, topOf: readonly number[]): Map<number, { host: number; enclosed: boolean }> {
  const tops = [...new Set(topOf)].sort((a, b) => {
    const x = t.steps[a]!;
    const y = t.steps[b]!;
    if (x.traceId !== y.traceId) return x.traceId < y.traceId ? -1 : 1;
    // The trace's root (no parent id at all) hosts before any orphan subtree's top.
    const rootFirst = Number(y.parentId === undefined) - Number(x.parentId === undefined);
    if (rootFirst !== 0) return rootFirst;
    if (x.startTimeUnixNano !== y.startTimeUnixNano) return x.startTimeUnixNano < y.startTimeUnixNano ? -1 : 1;
    if (x.endTimeUnixNano !== y.endTimeUnixNano) return x.endTimeUnixNano > y.endTimeUnixNano ? -1 : 1;
    return a - b;
  });
  const hostOf = new Map<number, { host: number; enclosed: boolean }>();
  let first: number | undefined;
  for (const top of tops) {
    const step = t.steps[top]!;
    const host = first === undefined ? undefined : t.steps[first]!;
    if (host === undefined || host.traceId !== step.traceId) first = top;
    else hostOf.set(top, { host: first!, enclosed: host.endTimeUnixNano >= step.endTimeUnixNano });
  }
  return hostOf;
}

function readRun(t: Trajectory, failures: readonly (StepFailure | undefined)[], top: number, steps: number[], agentAbove: readonly boolean[]): AgentRun {
  let final = top;
  let finalIsAgent = t.steps[top]!.kind === 'agent';
  if (!finalIsAgent) {
    for (const i of steps) {
      const s = t.steps[i]!;
      if (s.kind !== 'agent' || agentAbove[i]) continue;
      if (!finalIsAgent || s.endTimeUnixNano >= t.steps[final]!.endTimeUnixNano) {
        final = i;
        finalIsAgent = true;
      }
    }
  }
  const topStep = t.steps[top]!;
  const finalStep = t.steps[final]!;
  const endUnixNano = topStep.endTimeUnixNano > finalStep.endTimeUnixNano ? topStep.endTimeUnixNano : finalStep.endTimeUnixNano;
  // A failed tool or model call at the top (a trace whose root was not seen) is a step of the
  // run, not the run failing.
  const topIsRun = topStep.kind !== 'tool' && topStep.kind !== 'llm';
  const failed = (topIsRun && failures[top] !== undefined) || (final !== top && failures[final] !== undefined);
  const base = { top, steps, final, endUnixNano, failed };
  if (failed) return { ...base, outcome: { kind: 'absent', reason: 'run-failed' } };
  return { ...base, outcome: readOutcome(t, steps, top, final, topIsRun) };
}

function readOutcome(t: Trajectory, steps: readonly number[], top: number, final: number, topIsRun: boolean): AgentRun['outcome'] {
  let absence: OutcomeAbsence = 'no-output-captured';
  const attempt = (index: number, source: AnswerSource, reading: AnswerReading | undefined): AgentRun['outcome'] | undefined => {
    if (reading === undefined) return undefined;
    if (reading.kind === 'answer') return { kind: 'answer', text: reading.text, from: index, source };
    // The most specific reason seen wins over "nothing captured".
    if (absence === 'no-output-captured') absence = reading.reason;
    return undefined;
  };
  const candidates: [number, AnswerSource, AnswerReading | undefined][] = [];
  for (const index of final === top ? [final] : [final, top]) {
    const attribute = t.steps[index]!.attributes['final_result'];
    const value = isText(attribute) ? textOf(attribute) : undefined;
    if (value !== undefined && value.trim() !== '') candidates.push([index, 'final_result', { kind: 'answer', text: value }]);
  }
  // The top step's output is the run's own output; the final agent's, when the top is a
  // wrapper (a graph, a workflow, a crew), may be only that agent's part of it. A tool's result
  // or a model reply at the top (a trace whose root was not seen) is not the run's output.
  if (final !== top && topIsRun) candidates.push([top, 'root-output', resultReading(t.steps[top]!)]);
  if (final !== top || topIsRun) candidates.push([final, 'agent-output', resultReading(t.steps[final]!)]);
  const llm = lastLlm(t, steps);
  if (llm !== undefined) candidates.push([llm, 'last-llm-output', resultReading(t.steps[llm]!)]);
  for (const [index, source, reading] of candidates) {
    const found = attempt(index, source, reading);
    if (found !== undefined) return found;
  }
  return { kind: 'absent', reason: absence };
}

function resultReading(step: Step): AnswerReading | undefined {
  return step.result === undefined ? undefined : readAnswer(textOf(step.result));
}

/** The last-ending llm step of the run, when no tool step of the run started after it ended. */
function lastLlm(t: Trajectory, steps: readonly number[]): number | undefined {
  let best: number | undefined;
  for (const i of steps) {
    const s = t.steps[i]!;
    if (s.kind === 'llm' && (best === undefined || s.endTimeUnixNano >= t.steps[best]!.endTimeUnixNano)) best = i;
  }
  if (best === undefined) return undefined;
  const end = t.steps[best]!.endTimeUnixNano;
  for (const i of steps) if (t.steps[i]!.kind === 'tool' && t.steps[i]!.startTimeUnixNano >= end) return undefined;
  return best;
}

/**
 * The runs whose outcome the capture does not show (not a failed run: a run with no readable
 * answer), each with its top step and the reason: where claims resting on "the run reported
 * success" were not made. For whoever reports what a check could not claim.
 */
export function unreadableOutcomes(t: Trajectory, runs: AgentRuns): { traceId: string; spanId: string; reason: OutcomeAbsence }[] {
  const out: { traceId: string; spanId: string; reason: OutcomeAbsence }[] = [];
  for (const run of runs.runs) {
    if (run.outcome.kind !== 'absent' || run.outcome.reason === 'run-failed') continue;
    const top = t.steps[run.top]!;
    out.push({ traceId: top.traceId, spanId: top.id, reason: run.outcome.reason });
  }
  return out;
}
