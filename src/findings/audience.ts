import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { AUDIENCE_META_KEY, type Audience } from './internal-field.ts';
import { AnalysisManifestSchema, type AnalysisManifest } from './manifest-schema.ts';
import { FindingSchema, type Finding } from './schema.ts';
import { RECORD_OBSERVATIONS, type RecordValues } from './record-values.ts';

export { AUDIENCES, type Audience } from './internal-field.ts';

/**
 * The one audience rule (the @mutagent/evaluator seed's): a finding, alarm or manifest goes to
 * internal consumers whole, and to external ones (a customer-facing system, a partner team)
 * without run internals and methodology — no requested or served model ids, no receipts or
 * cost, no ledger keys, certificate ids, window-policy digests, internal run ids or data paths.
 * Claims, verdicts, evidence, severity and the determinism claim (method name and version:
 * the same method on the same evidence gives the same finding) stay. Which fields are internal
 * is read from the schemas (`internalField`), never listed here. Every surface — Kafka topics,
 * local logs, `trajwatch tail`, OTLP evaluation events, the label page — calls
 * {@link audienceView}. Pure: no clock, no I/O.
 */

/** A strip that would leak or over-reach: thrown, never shipped. */
export class AudienceError extends Error {
  override readonly name = 'AudienceError';
}

/** A path into a record; `*` stands for every element of an array. */
type Path = readonly string[];

const metaOf = (schema: z.ZodType): Record<string, unknown> | undefined => z.globalRegistry.get(schema) as Record<string, unknown> | undefined;
const isInternal = (schema: z.ZodType): boolean => metaOf(schema)?.[AUDIENCE_META_KEY] === 'internal';

/**
 * Every path of a field marked internal in `schema`. Walks objects, wrappers, arrays and
 * unions; stops at open shapes (records, JSON values), whose keys no schema names.
 */
export function internalPaths(schema: z.ZodType, at: Path = []): Path[] {
  if (isInternal(schema)) return [at];
  const def = (schema as unknown as { def: Record<string, unknown> & { type: string } }).def;
  switch (def.type) {
    case 'object':
      return Object.entries(def.shape as Record<string, z.ZodType>).flatMap(([k, v]) => internalPaths(v, [...at, k]));
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'nonoptional':
      return internalPaths(def.innerType as z.ZodType, at);
    case 'array':
      return internalPaths(def.element as z.ZodType, [...at, '*']);
    case 'union':
      return unique((def.options as z.ZodType[]).flatMap((o) => internalPaths(o, at)));
    default:
      return [];
  }
}

function unique(paths: Path[]): Path[] {
  const seen = new Set<string>();
  return paths.filter((p) => !seen.has(p.join('.')) && (seen.add(p.join('.')), true));
}

const FINDING_INTERNAL = internalPaths(FindingSchema);
const valuesPaths = (r: RecordValues): Path[] => internalPaths(r.values).map((p) => ['observation', 'values', ...p]);
/** Per declared record observation: the finding's internal paths and those of its values. */
const RECORD_INTERNAL: ReadonlyMap<string, readonly Path[]> = new Map(
  Object.entries(RECORD_OBSERVATIONS).map(([name, r]) => [name, [...FINDING_INTERNAL, ...valuesPaths(r)]]),
);
const RECORD_VALUES_INTERNAL = unique(Object.values(RECORD_OBSERVATIONS).flatMap((r) => valuesPaths(r)));
const MANIFEST_INTERNAL = internalPaths(AnalysisManifestSchema);

/** Every internal field, as `a.b.*.c`: for docs, tests and the leak scan. */
export const INTERNAL_FIELDS = {
  finding: [...FINDING_INTERNAL, ...RECORD_VALUES_INTERNAL].map((p) => p.join('.')),
  manifest: MANIFEST_INTERNAL.map((p) => p.join('.')),
} as const;

/** The key names of internal fields: an external view has none of them at any depth. */
const INTERNAL_NAMES = new Set([...FINDING_INTERNAL, ...RECORD_VALUES_INTERNAL, ...MANIFEST_INTERNAL].map((p) => p.at(-1)!));

/**
 * What must come through an external view unchanged: the claim and its identity, verdict,
 * evidence, severity, method (the determinism claim), subject, provenance and covariates.
 */
const FINDING_KEPT = [
  'schema_version',
  'finding_id',
  'analyst_id',
  'area',
  'subject',
  'claim',
  'severity',
  'layer',
  'method',
  'verdict',
  'evidence_refs',
  'code_eval_hits',
  'treatment',
  'conditions',
  'observed_at',
  'covariates',
] as const;

/** What an external strip did: the view and the paths it removed (concrete, with array indices). */
export interface StripReport<T> {
  view: T;
  removed: string[];
}

/**
 * The view of a finding (or alarm) or manifest for `audience`: `internal` is the record
 * itself, whole; `external` a copy without the internal fields.
 * @throws AudienceError when the external strip cannot be trusted: a judged observation with
 *   keys no schema declares, an unknown record observation, an internal key left anywhere, a
 *   kept field changed, or a judged finding from which nothing was removed.
 * @example audienceView(finding, 'external') // what a partner topic or the label page shows
 */
export function audienceView<T extends Finding | AnalysisManifest>(record: T, audience: Audience): T {
  return audience === 'internal' ? record : stripInternal(record).view;
}

/** The external view with what it removed (see {@link audienceView}). */
export function stripInternal<T extends Finding | AnalysisManifest>(record: T): StripReport<T> {
  const manifest = 'record_kind' in record;
  const paths = manifest ? MANIFEST_INTERNAL : findingPaths(record as Finding);
  const view = structuredClone(record);
  const removed: string[] = [];
  for (const p of paths) remove(view, p, [], removed);
  const leak = findKey(view, INTERNAL_NAMES);
  if (leak !== undefined) throw new AudienceError(`external view still carries internal field ${leak}`);
  if (!manifest) checkKept(record as Finding, view as Finding);
  if (!manifest && (record as Finding).method.kind === 'judged' && removed.length === 0) {
    // A judged finding always carries its model ids and ledger key: removing none means the
    // strip no longer sees them, the failure that ships them.
    throw new AudienceError(`external strip removed nothing from judged finding ${(record as Finding).finding_id}`);
  }
  return { view, removed };
}

function findingPaths(f: Finding): readonly Path[] {
  const o = f.observation;
  if (o === undefined || o.kind !== 'record') return FINDING_INTERNAL;
  const declared = declaredValues(o.name);
  if (declared === undefined) {
    throw new AudienceError(`record observation "${o.name}" on ${f.finding_id} has no declared audience: declare its values schema in record-values.ts`);
  }
  const parsed = declared.values.safeParse(o.values);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(values)'}: ${i.message}`).join('; ');
    throw new AudienceError(`${o.name} values on ${f.finding_id} do not match their declared schema (declare each key with its audience): ${issues}`);
  }
  return RECORD_INTERNAL.get(o.name)!;
}

/** A record observation's declaration; a name read from outside the schema may have none. */
function declaredValues(name: string): RecordValues | undefined {
  return Object.hasOwn(RECORD_OBSERVATIONS, name) ? (RECORD_OBSERVATIONS as Record<string, RecordValues>)[name] : undefined;
}

function remove(node: unknown, path: Path, at: string[], removed: string[]): void {
  if (typeof node !== 'object' || node === null) return;
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (head === '*') {
    if (Array.isArray(node)) node.forEach((el, i) => remove(el, rest, [...at, String(i)], removed));
    return;
  }
  const obj = node as Record<string, unknown>;
  if (!Object.hasOwn(obj, head)) return;
  if (rest.length === 0) {
    delete obj[head];
    removed.push([...at, head].join('.'));
  } else {
    remove(obj[head], rest, [...at, head], removed);
  }
}

/** The first path at which an object key is one of `names`, searched independently of the strip's paths. */
function findKey(node: unknown, names: ReadonlySet<string>, at = ''): string | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  for (const [k, v] of Object.entries(node)) {
    const here = at === '' ? k : `${at}.${k}`;
    if (!Array.isArray(node) && names.has(k)) return here;
    const deeper = findKey(v, names, here);
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}

function checkKept(original: Finding, view: Finding): void {
  for (const k of FINDING_KEPT) {
    if (!isDeepStrictEqual(original[k], view[k])) throw new AudienceError(`external strip changed ${k}, which must stay`);
  }
  const a = original.observation;
  const b = view.observation;
  if (a?.kind !== b?.kind) throw new AudienceError('external strip changed the observation kind');
  if (a?.kind === 'record' && b?.kind === 'record') {
    for (const k of declaredValues(a.name)?.kept ?? []) {
      if (!isDeepStrictEqual(a.values[k], b.values[k])) throw new AudienceError(`external strip changed observation.values.${k}, which must stay`);
    }
  } else if (!isDeepStrictEqual(a, b)) {
    throw new AudienceError('external strip changed the observation, which has no internal fields');
  }
}
