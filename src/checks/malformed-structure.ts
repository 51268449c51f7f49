import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import type { L0Hit } from './check-result.ts';
import type { ChecksConfig } from './config.ts';
import { excerpt } from './hit-text.ts';
import { isApplicableSchema, parameterSchemaOf, validateJsonSubset } from './json-schema-subset.ts';
import { compareCodeUnits } from '../normalize/sort-small.ts';

/**
 * `malformed-structure`, one hit per anchor with every reason found there, in trajectory order
 * (capture conflicts on span ids that are not steps come last, by span id):
 * - a tool step with no tool name;
 * - tool arguments that do not parse, from a convention whose arguments are JSON
 *   (`options.jsonArgsConventions`; OpenInference `input.mime_type: text/plain` opts out);
 * - parsed arguments violating the tool's declared parameter schema, when some step of the
 *   trajectory carries one in `toolSchemas` (see {@link validateJsonSubset} for the subset);
 * - a capture conflict: two different payloads arrived under one span id.
 */
export function malformedStructure(t: Trajectory, cfg: ChecksConfig): L0Hit[] {
  const reasons = new Map<string, { traceId: string; parts: string[] }>();
  const add = (traceId: string, spanId: string, part: string) => {
    const entry = reasons.get(spanId) ?? { traceId, parts: [] };
    entry.parts.push(part);
    reasons.set(spanId, entry);
  };
  const jsonConventions = new Set(cfg.options.jsonArgsConventions);
  const declaredSchema = schemaResolver(t);

  t.steps.forEach((step, i) => {
    if (step.kind !== 'tool') return;
    if (step.toolName === undefined || step.toolName.trim() === '') {
      add(step.traceId, step.id, `tool step "${step.name}" has no tool name`);
    }
    if (step.args === undefined) return;
    if (step.args.parsed === undefined) {
      if (expectsJsonArgs(step, jsonConventions)) {
        const quoted = excerpt(step.args.raw, cfg.options.detailExcerptChars);
        add(step.traceId, step.id, `${toolLabel(step)} arguments are not JSON (${step.convention}): "${quoted}"`);
      }
      return;
    }
    if (step.toolName === undefined) return;
    const schema = declaredSchema(i, step.toolName);
    if (schema === undefined) return;
    const args = schemaArguments(step);
    if (args === undefined) return;
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

function expectsJsonArgs(step: Step, conventions: Set<string>): boolean {
  if (!conventions.has(step.convention)) return false;
  const mime = step.attributes['input.mime_type'];
  return !(step.convention === 'openinference' && typeof mime === 'string' && mime.startsWith('text/plain'));
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
 * The value to validate against the parameter schema. smolagents (OpenInference) records a
 * call as `{"args": [...], "sanitize_inputs_outputs": ..., "kwargs": {...}}`: its keyword
 * arguments are the parameters, and positional ones cannot be named, so such a call is not
 * validated.
 */
function schemaArguments(step: Step): unknown {
  const parsed = step.args?.parsed;
  if (step.convention !== 'openinference' || !isSmolagentsCall(parsed)) return parsed;
  return parsed['args'].length === 0 ? parsed['kwargs'] : undefined;
}

function isSmolagentsCall(value: unknown): value is { args: unknown[]; kwargs: Record<string, unknown> } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  const kwargs = record['kwargs'];
  return (
    Array.isArray(record['args']) &&
    kwargs !== null &&
    typeof kwargs === 'object' &&
    !Array.isArray(kwargs) &&
    Object.keys(record).every((k) => k === 'args' || k === 'kwargs' || k === 'sanitize_inputs_outputs')
  );
}

function toolLabel(step: Step): string {
  return step.toolName === undefined ? `tool step "${step.name}"` : `tool "${step.toolName}"`;
}

function rank(order: Map<string, number>, stepIds: Set<string>, id: string): number {
  return stepIds.has(id) ? order.get(id)! : Number.MAX_SAFE_INTEGER;
}
