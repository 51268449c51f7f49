import type { Trajectory } from '../assemble/trajectory.ts';
import { parseJsonText } from '../normalize/json-text.ts';
import { readRecordedCall } from '../normalize/recorded-call.ts';
import type { Step, ToolArgs } from '../normalize/step.ts';
import type { PatternHit } from './hit.ts';
import type { ChecksConfig } from './config.ts';
import { cannotHide, hides, UNREAD_SPAN, UNSPANNED_CALL } from './capture-table.ts';
import type { L0CheckDefinition } from './l0-check.ts';
import { excerpt } from './hit-text.ts';
import { isApplicableSchema, parameterSchemaOf, validateJsonSubset } from './json-schema-subset.ts';
import { compareCodeUnits } from '../core/sort-small.ts';

/**
 * `malformed-structure`, one hit per anchor with every reason found there, in trajectory order
 * (capture conflicts on span ids that are not steps come last, by span id):
 * - tool arguments that do not parse although they are declared JSON (`ToolArgs.declared`),
 *   or come undeclared from a convention listed in `options.jsonArgsConventions`;
 * - arguments that are a JSON object violating the tool's declared parameter schema, when some
 *   step of the trajectory carries one in `toolSchemas` (see {@link validateJsonSubset} for the
 *   subset), a recorded call by its keyword arguments ({@link callArguments}); derived
 *   arguments (`args.source: 'request'`, the model's request) are validated like captured ones. A scalar or an array
 *   is not validated: instrumentations record a one-argument call as that argument's bare value
 *   (LangChain.js OpenInference writes `{"order_id": "42"}` as `input.value: "42"`, mime type
 *   `application/json`; LangGraph Python writes `Paris`), which names no parameter;
 * - a capture conflict: two different payloads arrived under one span id.
 */
export function malformedStructure(t: Trajectory, cfg: ChecksConfig): PatternHit<'malformed-structure'>[] {
  const reasons = new Map<string, { traceId: string; parts: string[] }>();
  const add = (traceId: string, spanId: string, part: string) => {
    const entry = reasons.get(spanId) ?? { traceId, parts: [] };
    entry.parts.push(part);
    reasons.set(spanId, entry);
  };
  const jsonConventions = new Set(cfg.options.jsonArgsConventions);
  const declaredSchema = schemaResolver(t);

  t.steps.forEach((step, i) => {
    // A tool step with no tool name is a capture gap (`captureGaps`), not the agent's fault.
    if (step.kind !== 'tool' || step.args === undefined) return;
    const captured = capturedText(step.args);
    if (captured !== undefined && !captured.parses && mustBeJson(step, jsonConventions)) {
      const quoted = excerpt(captured.text, cfg.options.detailExcerptChars);
      add(step.traceId, step.id, `${toolLabel(step)} arguments are not JSON (${step.convention}): "${quoted}"`);
    }
    if (step.args.parsed === undefined) return;
    if (step.toolName === undefined) return;
    const schema = declaredSchema(i, step.toolName);
    if (schema === undefined) return;
    const args = callArguments(step.args, schema);
    if (!isPlainObject(args)) return;
    const problems = validateJsonSubset(args, schema);
    if (problems.length > 0) {
      add(step.traceId, step.id, `${toolLabel(step)} arguments violate its declared schema: ${problems.join('; ')}`);
    }
  });

  if (reasons.size === 0 && t.conflicts.length === 0) return [];
  const stepIds = new Set(t.steps.map((s) => s.id));
  const conflicts = [...t.conflicts].sort((a, b) => compareCodeUnits(a.spanId, b.spanId) || compareCodeUnits(a.traceId, b.traceId));
  for (const c of conflicts) {
    add(
      c.traceId,
      c.spanId,
      `two different payloads under span id ${c.spanId}: kept sha256 ${c.keptDigest.slice(0, 12)}, refused sha256 ${c.refusedDigest.slice(0, 12)}`,
    );
  }

  const order = new Map(t.steps.map((s, i) => [s.id, i]));
  return [...reasons.entries()]
    .sort(([a], [b]) => rank(order, stepIds, a) - rank(order, stepIds, b) || compareCodeUnits(a, b))
    .map(([anchor, entry]) => ({
      pattern: 'malformed-structure' as const,
      anchor,
      detail: entry.parts.join('; '),
      evidence: [{ traceId: entry.traceId, spanId: anchor }],
    }));
}

/**
 * The tool span's own arguments text and whether it parses: `raw`, or for arguments derived
 * from the request (`source: 'request'`) the text they replaced, so a declared-JSON capture
 * that does not parse is reported whether or not the request supplied the arguments.
 */
function capturedText(args: ToolArgs): { text: string; parses: boolean } | undefined {
  // A Python literal equal to the request's JSON arguments is the instrumentation's form, not the agent's.
  if (args.capturedAs === 'python-literal') return undefined;
  if (args.source !== 'request') return { text: args.raw, parses: args.parsed !== undefined };
  if (args.captured === undefined) return undefined;
  return { text: args.captured, parses: parseJsonText(args.captured) !== undefined };
}

/** Arguments that must parse: declared JSON, or undeclared from a convention configured as JSON. */
function mustBeJson(step: Step, conventions: Set<string>): boolean {
  const declared = step.args?.declared;
  return declared === 'json' || (declared === undefined && conventions.has(step.convention));
}

/**
 * Resolves the declared parameter schema of a tool at a step: the step's own declaration, else
 * the nearest earlier step's, else the first later one. Call with increasing indexes.
 */
function schemaResolver(t: Trajectory): (index: number, toolName: string) => Record<string, unknown> | undefined {
  const schemaOf = (declared: unknown) => parameterSchemaOf(declared) ?? (isApplicableSchema(declared) ? declared : undefined);
  const first = new Map<string, Record<string, unknown>>();
  for (const step of t.steps) {
    for (const [name, declared] of Object.entries(step.toolSchemas ?? {})) {
      const schema = schemaOf(declared);
      if (schema !== undefined && !first.has(name)) first.set(name, schema);
    }
  }
  const latest = new Map<string, Record<string, unknown>>();
  let seen = 0;
  return (index, toolName) => {
    for (; seen <= index && seen < t.steps.length; seen++) {
      for (const [name, declared] of Object.entries(t.steps[seen]!.toolSchemas ?? {})) {
        const schema = schemaOf(declared);
        if (schema !== undefined) latest.set(name, schema);
      }
    }
    return latest.get(toolName) ?? first.get(toolName);
  };
}

/**
 * The value to validate against the parameter schema. Normalize has read a recorded call as
 * its keyword arguments (`ToolArgs.recorded`, `readRecordedCall`), a wrapper the request
 * confirmed (`recorded: 'wrapped'`) by its inner arguments; a schema that itself
 * declares an `args` or `kwargs` property means the value was not wrapped, so the captured
 * value is read again as it is. A call with positional arguments cannot be matched to
 * parameter names, nor can a value with `args`/`kwargs` beside structured members (a shape not
 * known to be a call), so neither is validated (`undefined`).
 */
export function callArguments(args: ToolArgs, schema: Record<string, unknown>): unknown {
  if (args.recorded === 'wrapped') return args.parsed;
  const properties = schema['properties'];
  const declaresCall = isPlainObject(properties) && (Object.hasOwn(properties, 'args') || Object.hasOwn(properties, 'kwargs'));
  if (declaresCall) return args.recorded === 'kwargs' ? parseJsonText(args.raw)?.value : args.parsed;
  if (args.recorded === 'kwargs') return args.parsed;
  const call = readRecordedCall(args.parsed);
  return call === undefined ? args.parsed : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toolLabel(step: Step): string {
  return step.toolName === undefined ? `tool step "${step.name}"` : `tool "${step.toolName}"`;
}

function rank(order: Map<string, number>, stepIds: Set<string>, id: string): number {
  return stepIds.has(id) ? order.get(id)! : Number.MAX_SAFE_INTEGER;
}

export const malformedStructureCheck: L0CheckDefinition<'malformed-structure'> = {
  pattern: 'malformed-structure',
  run: malformedStructure,
  // Malformed structure is a defect worth a look.
  severity: 'medium',
  claim: (a) => `${a} has malformed structure`,
  absence: 'none',
  silentOnIncomplete: 'no malformed step among the captured steps; spans not captured may hold one',
  hiddenBy: {
    'tool-name-not-captured': hides('a tool step without a tool name cannot be checked against a declared schema'),
    'tool-call-not-captured': hides(`the arguments of ${UNSPANNED_CALL} were not captured as the tool received them`),
    'tool-args-not-captured': hides('a tool step without captured arguments cannot be checked'),
    'tool-result-not-captured': cannotHide('results are not part of what it checks (arguments and capture conflicts)'),
    'unread-convention': hides(`the arguments of ${UNREAD_SPAN} are not checked`),
    'clock-skew': hides(
      "a call is checked against the tool's nearest earlier declared schema: timestamps that contradict the span tree can pick the wrong one",
    ),
  },
};
