/**
 * How a captured value reads as a recorded call `f(*args, **kwargs)`, by its shape alone,
 * whatever framework or convention wrote it: an object with a `kwargs` object and/or an `args`
 * array, whose other members are scalars (flags such as smolagents' `sanitize_inputs_outputs`).
 * OpenLLMetry and LlamaIndex write `{"args": [], "kwargs": {...}}` or `{"kwargs": {...}}`,
 * smolagents `{"args": [...], "sanitize_inputs_outputs": ..., "kwargs": {...}}`.
 *
 * - `kwargs`: a call with no positional arguments; `kwargs` are its arguments by name (`{}`
 *   when it has none).
 * - `positional`: a call with positional arguments, which cannot be named.
 * - `unclear`: `args`/`kwargs` members in a shape not known to be a call (a non-array `args`,
 *   a non-object `kwargs`, or structured members beside them).
 * - `undefined`: no `args` or `kwargs` member: not a recorded call.
 *
 * The reading says nothing of what the tool declared: a tool whose own parameters are named
 * `args` or `kwargs` is not wrapped, which only its schema can tell (malformed-structure).
 */
export type RecordedCall = { shape: 'kwargs'; kwargs: Record<string, unknown> } | { shape: 'positional' } | { shape: 'unclear' };

export function readRecordedCall(value: unknown): RecordedCall | undefined {
  if (!isPlainObject(value)) return undefined;
  const hasArgs = Object.hasOwn(value, 'args');
  const hasKwargs = Object.hasOwn(value, 'kwargs');
  if (!hasArgs && !hasKwargs) return undefined;
  const args = value['args'];
  const kwargs = value['kwargs'];
  if (hasArgs && !Array.isArray(args)) return { shape: 'unclear' };
  if (hasKwargs && !isPlainObject(kwargs)) return { shape: 'unclear' };
  for (const [key, member] of Object.entries(value)) {
    if (key !== 'args' && key !== 'kwargs' && typeof member === 'object' && member !== null) return { shape: 'unclear' };
  }
  if (Array.isArray(args) && args.length > 0) return { shape: 'positional' };
  return { shape: 'kwargs', kwargs: hasKwargs ? (kwargs as Record<string, unknown>) : {} };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
