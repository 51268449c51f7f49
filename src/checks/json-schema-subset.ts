/**
 * A small validator for the part of JSON Schema that tool parameter declarations use:
 * `type` (string or list), `required`, `properties`, `enum`, `items` (one schema),
 * `additionalProperties: false` (or a schema), and OpenAPI's `nullable: true`. Every other keyword is ignored, so a value is
 * only reported invalid for a reason this subset can state. Hand-written rather than a
 * library: it runs inline on every tool call and needs no schema compilation step.
 */

const JSON_TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'integer', 'string']);

/** Bound on nesting and on reported problems, so hostile schemas or values stay cheap. */
const MAX_DEPTH = 32;
const MAX_PROBLEMS = 8;

/**
 * Whether a value looks like a JSON Schema this validator can apply: an object with a known
 * `type`, or with `properties`. Tool-definition wrappers are unwrapped first by
 * {@link parameterSchemaOf}.
 */
export function isApplicableSchema(schema: unknown): schema is Record<string, unknown> {
  if (!isRecord(schema)) return false;
  const type = schema['type'];
  if (typeof type === 'string' && JSON_TYPES.has(type)) return true;
  if (Array.isArray(type) && type.length > 0 && type.every((t) => typeof t === 'string' && JSON_TYPES.has(t))) return true;
  return isRecord(schema['properties']);
}

/**
 * The parameter schema inside a tool declaration: OpenAI's `{type:"function", function:{parameters}}`,
 * the flat `{type:"function", parameters}` / `{name, parameters}`, or a bare schema.
 * `undefined` when none applies.
 */
export function parameterSchemaOf(declaration: unknown): Record<string, unknown> | undefined {
  if (!isRecord(declaration)) return undefined;
  const fn = declaration['function'];
  if (isRecord(fn) && isApplicableSchema(fn['parameters'])) return fn['parameters'];
  if (declaration['type'] === 'function' || typeof declaration['name'] === 'string') {
    const params = declaration['parameters'] ?? declaration['input_schema'] ?? declaration['inputSchema'];
    if (isApplicableSchema(params)) return params;
  }
  if (declaration['type'] === 'function') return undefined;
  return isApplicableSchema(declaration) ? declaration : undefined;
}

/**
 * Validate a JSON value against a schema in the supported subset.
 * Returns the problems found (at most a few), each with its JSON path; empty when valid.
 *
 * @example validateJsonSubset({ q: 1 }, { type: 'object', properties: { q: { type: 'string' } } })
 *   // ['$.q: expected string, got integer']
 */
export function validateJsonSubset(value: unknown, schema: unknown): string[] {
  const problems: string[] = [];
  check(value, schema, '$', 0, problems);
  return problems;
}

function check(value: unknown, schema: unknown, path: string, depth: number, problems: string[]): void {
  if (problems.length >= MAX_PROBLEMS || depth > MAX_DEPTH || !isRecord(schema)) return;
  // OpenAPI's `nullable: true`, which OpenAI- and Gemini-style tool schemas use for optional
  // parameters (smolagents emits it), admits null whatever the type says.
  if (value === null && schema['nullable'] === true) return;

  const types = declaredTypes(schema['type']);
  if (types !== undefined && !types.some((t) => hasType(value, t))) {
    problems.push(`${path}: expected ${types.join(' or ')}, got ${typeOf(value)}`);
    return;
  }

  const allowed = schema['enum'];
  if (Array.isArray(allowed) && !allowed.some((option) => jsonEqual(option, value))) {
    problems.push(`${path}: ${short(value)} is not one of the allowed values`);
  }

  if (isRecord(value)) {
    const props = isRecord(schema['properties']) ? schema['properties'] : {};
    const required = schema['required'];
    if (Array.isArray(required)) {
      for (const key of required) {
        if (typeof key === 'string' && !Object.hasOwn(value, key)) {
          problems.push(`${path}: missing required property "${key}"`);
        }
      }
    }
    const additional = schema['additionalProperties'];
    for (const key of Object.keys(value).sort()) {
      const child = value[key];
      const childPath = `${path}.${key}`;
      if (Object.hasOwn(props, key)) check(child, props[key], childPath, depth + 1, problems);
      else if (additional === false) problems.push(`${path}: unexpected property "${key}"`);
      else if (isRecord(additional)) check(child, additional, childPath, depth + 1, problems);
    }
  }

  if (Array.isArray(value) && isRecord(schema['items'])) {
    value.forEach((item, i) => check(item, schema['items'], `${path}[${i}]`, depth + 1, problems));
  }
}

function declaredTypes(type: unknown): string[] | undefined {
  if (typeof type === 'string') return JSON_TYPES.has(type) ? [type] : undefined;
  if (Array.isArray(type)) {
    const known = type.filter((t): t is string => typeof t === 'string' && JSON_TYPES.has(t));
    return known.length === type.length && known.length > 0 ? known : undefined;
  }
  return undefined;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'string':
      return typeof value === 'string';
    case 'array':
      return Array.isArray(value);
    default:
      return isRecord(value);
  }
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = Object.keys(ra);
  return keys.length === Object.keys(rb).length && keys.every((k) => Object.hasOwn(rb, k) && jsonEqual(ra[k], rb[k]));
}

function short(value: unknown): string {
  const text = String(JSON.stringify(value));
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
