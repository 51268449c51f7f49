import { compareSteps } from '../../src/assemble/step-order.ts';
/** Small builders for Steps and Trajectories in check tests. */
import type { CaptureConflict, IncompleteReason, Trajectory } from '../../src/assemble/trajectory.ts';
import type { ArgsFormat, Step, StepKind } from '../../src/normalize/step.ts';
import { toToolArgs } from '../../src/normalize/tool-args.ts';
import { makeStep } from '../helpers/steps.ts';

const TRACE = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

export interface StepSpec extends Partial<Omit<Step, 'args' | 'startTimeUnixNano' | 'endTimeUnixNano'>> {
  /** Tool args as captured text (JSON or not); the digest comes from normalize's `toToolArgs`. */
  args?: string;
  /**
   * The declared format of `args`; by default `json` for the conventions whose mappers declare
   * it (`genai`, `vercel-ai`), else none.
   */
  argsDeclared?: ArgsFormat;
  /** Start and end in whole seconds from an arbitrary epoch, for readability. */
  at?: number;
  end?: number;
}

let counter = 0;

/** A step; ids default to a running counter, times to `at` seconds (ending 1 s later). */
export function step(kind: StepKind, spec: StepSpec = {}): Step {
  const { args, argsDeclared, at, end, ...rest } = spec;
  counter++;
  const startS = at ?? counter;
  const built = makeStep({
    id: spec.id ?? counter.toString(16).padStart(16, '0'),
    kind,
    name: spec.name ?? spec.toolName ?? kind,
    convention: 'genai',
    startTimeUnixNano: BigInt(startS) * 1_000_000_000n,
    endTimeUnixNano: BigInt(end ?? startS + 1) * 1_000_000_000n,
    ...rest,
  });
  if (args !== undefined) {
    const declared = argsDeclared ?? (built.convention === 'genai' || built.convention === 'vercel-ai' ? 'json' : undefined);
    built.args = toToolArgs(args, declared);
  }
  return built;
}

/** A tool step named `toolName`, with JSON args text when given. */
export function tool(toolName: string, spec: StepSpec = {}): Step {
  return step('tool', { toolName, name: `execute_tool ${toolName}`, ...spec });
}

/** A tool step that failed with an exception. */
export function failedTool(toolName: string, message: string, spec: StepSpec = {}): Step {
  return tool(toolName, {
    statusCode: 2,
    eventNames: ['exception'],
    error: { source: 'exception', type: 'ToolError', message },
    ...spec,
  });
}

/** An agent step (the run) with a final output. */
export function agent(result: string | undefined, spec: StepSpec = {}): Step {
  const built = step('agent', { name: 'invoke_agent', agentName: 'assistant', ...spec });
  if (result !== undefined) built.result = result;
  return built;
}

export interface TrajectorySpec {
  complete?: boolean;
  incompleteReasons?: IncompleteReason[];
  conflicts?: CaptureConflict[];
}

/** A trajectory over `steps`, sorted the way the assembler sorts them. */
export function trajectory(steps: Step[], spec: TrajectorySpec = {}): Trajectory {
  const complete = spec.complete ?? true;
  const sorted = [...steps].sort(compareSteps);
  return {
    key: TRACE,
    traceIds: [TRACE],
    revision: 1,
    complete,
    incompleteReasons: spec.incompleteReasons ?? (complete ? [] : ['root-not-seen']),
    steps: sorted,
    conflicts: spec.conflicts ?? [],
    refusedSpans: 0,
    closedBy: complete ? 'quiet-after-root' : 'idle-timeout',
  };
}

/** A capture conflict on a step's span id. */
export function conflictOn(s: Step): CaptureConflict {
  return { traceId: s.traceId, spanId: s.id, keptDigest: 'a'.repeat(64), refusedDigest: 'b'.repeat(64) };
}
