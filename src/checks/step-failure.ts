import { isText, textOf } from '../ingest/long-text.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import { errorTypeName } from '../normalize/error.ts';
import type { Step } from '../normalize/step.ts';
import type { CompiledRules } from './rules.ts';

/** Why a step counts as failed, and what it said. */
export interface StepFailure {
  /** Where the failure was read: the span status, an exception event, `error.type`, or the result text. */
  source: 'status' | 'exception' | 'error.type' | 'result';
  type?: string;
  /** The error text as captured: status/exception message, or the error payload. */
  text?: string;
}

/**
 * Whether a step failed, read from every place a convention may put it: status 2, an
 * `exception` event, `error.type`, the normalizer's `error`, or (tools only) a result the
 * error-payload rules recognize. `undefined` when nothing says it failed.
 */
export function stepFailure(step: Step, rules: CompiledRules): StepFailure | undefined {
  const err = step.error;
  // A placeholder `error.type` (`_OTHER`, `unknown`) still marks the failure below, but names no type.
  const type = err?.type ?? errorTypeName(stringAttr(step, 'error.type'));
  const text = nonEmpty(err?.message);
  // The normalizer's error names the most specific evidence; the raw fields are read too, so
  // a step built without one (or by a mapper that missed it) still counts.
  if (err !== undefined) return withOptional(err.source, type, text ?? (err.source === 'result' ? nonEmpty(textOf(step.result)) : undefined));
  if (step.statusCode === 2) return withOptional('status', type, text);
  if (step.eventNames.includes('exception')) return withOptional('exception', type, text);
  if (stringAttr(step, 'error.type') !== undefined) return withOptional('error.type', type, text);
  const result = textOf(step.result);
  if (step.kind === 'tool' && result !== undefined && isErrorPayload(result, rules)) {
    return { source: 'result', text: result };
  }
  return undefined;
}

const memo = new WeakMap<Trajectory, { rules: CompiledRules; failures: readonly (StepFailure | undefined)[] }>();

/**
 * `stepFailure` of every step of a trajectory, by step index, read once per trajectory and
 * rules: several checks ask about every step (error output, fault passthrough, the gates of
 * two checks), and the result patterns are regular expressions over each result text.
 * Callers only read the answers.
 */
export function stepFailures(t: Trajectory, rules: CompiledRules): readonly (StepFailure | undefined)[] {
  const known = memo.get(t);
  if (known !== undefined && known.rules === rules) return known.failures;
  const failures = t.steps.map((step) => stepFailure(step, rules));
  memo.set(t, { rules, failures });
  return failures;
}

/** Whether a tool result text is an error payload under the configured rules. */
export function isErrorPayload(result: string, rules: CompiledRules): boolean {
  const head = result.length > rules.scanChars ? result.slice(0, rules.scanChars) : result;
  if (rules.errorResultPatterns.some((re) => re.test(head))) return true;
  if (rules.jsonErrorKeys.length === 0 || !/^\s*\{/.test(head)) return false;
  // Only a whole result within the scan bound is parsed: a bigger one is not probed.
  if (result.length > rules.scanChars) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(result);
  } catch {
    return false; // not JSON after all: the patterns above are the only test
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return false;
  const record = parsed as Record<string, unknown>;
  return rules.jsonErrorKeys.some((key) => truthy(record[key]));
}

function truthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === '' || value === 0) return false;
  if (typeof value === 'object' && Object.keys(value).length === 0) return false;
  return true;
}

function stringAttr(step: Step, key: string): string | undefined {
  const value = step.attributes[key];
  const text = isText(value) ? textOf(value) : undefined;
  return text !== undefined && text !== '' ? text : undefined;
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text.trim() === '' ? undefined : text;
}

function withOptional(source: StepFailure['source'], type?: string, text?: string): StepFailure {
  const failure: StepFailure = { source };
  if (type !== undefined) failure.type = type;
  if (text !== undefined) failure.text = text;
  return failure;
}
