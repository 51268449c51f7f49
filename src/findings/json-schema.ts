import { z } from 'zod';
import { captureStates } from './capture-states.ts';
import { AnalysisManifestSchema, MANIFEST_SCHEMA_VERSION } from './manifest-schema.ts';
import { FINDING_SCHEMA_VERSION, FindingSchema } from './schema.ts';
import { AUDIENCE_META_KEY, type Audience } from './internal-field.ts';
import { RECORD_OBSERVATIONS, type RecordObservationName } from './record-values.ts';

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

function toJsonSchema(schema: z.ZodType, audience: Audience = 'internal'): Record<string, unknown> {
  const full = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;
  return audience === 'internal' ? full : (withoutInternal(full) as Record<string, unknown>);
}

/**
 * The external view's schema: every property the zod schema marks internal (`internalField`,
 * which zod carries into the JSON Schema as `"audience": "internal"`) removed, with its
 * `required` entry — the same marks `audience.ts` strips records by.
 */
function withoutInternal(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutInternal);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  const obj = node as Record<string, unknown>;
  const props = obj.properties as Record<string, Record<string, unknown>> | undefined;
  const dropped = new Set(props === undefined ? [] : Object.keys(props).filter((k) => props[k]?.[AUDIENCE_META_KEY] === 'internal'));
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'properties' && props !== undefined) {
      out[k] = Object.fromEntries(
        Object.entries(props)
          .filter(([name]) => !dropped.has(name))
          .map(([name, p]) => [name, withoutInternal(p)]),
      );
    } else if (k === 'required' && Array.isArray(v)) {
      out[k] = v.filter((name) => !dropped.has(name as string));
    } else {
      out[k] = withoutInternal(v);
    }
  }
  return out;
}

const suffix = (audience: Audience): string => (audience === 'internal' ? '' : '.external');
const viewTitle = (audience: Audience): string => (audience === 'internal' ? '' : ', external view');

/**
 * The finding schema as JSON Schema (draft 2020-12), for consumers in other languages, in the
 * view of `audience` (docs/consumers.md "Audience"); `trajwatch schema finding` prints it.
 */
export function findingJsonSchema(audience: Audience = 'internal'): Record<string, unknown> {
  return {
    ...toJsonSchema(FindingSchema, audience),
    $id: `https://trajwatch.dev/schemas/finding-${FINDING_SCHEMA_VERSION}${suffix(audience)}.json`,
    title: `trajwatch finding ${FINDING_SCHEMA_VERSION}${viewTitle(audience)}`,
  };
}

/**
 * The analysis manifest as JSON Schema; `trajwatch schema manifest` prints it. `capture_states`
 * (an annotation, not a constraint) documents every capture state — the incomplete reasons and
 * the capture gap kinds — and which checks each silences, generated from the capture table.
 */
export function manifestJsonSchema(audience: Audience = 'internal'): Record<string, unknown> {
  return {
    ...toJsonSchema(AnalysisManifestSchema, audience),
    $id: `https://trajwatch.dev/schemas/analysis-manifest-${MANIFEST_SCHEMA_VERSION}${suffix(audience)}.json`,
    title: `trajwatch analysis manifest ${MANIFEST_SCHEMA_VERSION}${viewTitle(audience)}`,
    capture_states: captureStates(),
  };
}

/**
 * The `values` of a finding's record observation `name` (open in the finding schema, declared
 * in `record-values.ts`); `trajwatch schema <name>` prints it.
 */
export function recordValuesJsonSchema(name: RecordObservationName, audience: Audience = 'internal'): Record<string, unknown> {
  return {
    ...toJsonSchema(RECORD_OBSERVATIONS[name].values, audience),
    $id: `https://trajwatch.dev/schemas/${name}-values-${FINDING_SCHEMA_VERSION}${suffix(audience)}.json`,
    title: `trajwatch ${name} observation values${viewTitle(audience)}`,
  };
}

/** The `values` of a judged finding's `trace-question` observation; `trajwatch schema trace-question`. */
export const traceQuestionJsonSchema = (audience: Audience = 'internal'): Record<string, unknown> => recordValuesJsonSchema('trace-question', audience);

/**
 * One line of the findings log (one message of the findings topic): exactly one of a finding
 * or an analysis manifest. They cannot be confused: a manifest requires `record_kind`, which a
 * finding may not carry. `trajwatch schema record` prints it.
 */
export function recordJsonSchema(audience: Audience = 'internal'): Record<string, unknown> {
  // Each part's own `$defs` (zod's `#/$defs/__schema0` for JSON values) move to the root, where
  // their `#/$defs/...` references resolve.
  const defs: Record<string, unknown> = {};
  const part = (name: string, schema: z.ZodType) => {
    const { $schema: _draft, $defs, ...rest } = toJsonSchema(schema, audience);
    for (const [k, v] of Object.entries(($defs ?? {}) as Record<string, unknown>)) {
      if (k in defs) throw new Error(`JSON Schema $defs name ${k} used twice`);
      defs[k] = v;
    }
    defs[name] = rest;
  };
  part('finding', FindingSchema);
  part('analysis_manifest', AnalysisManifestSchema);
  return {
    $schema: DRAFT,
    $id: `https://trajwatch.dev/schemas/findings-record-${FINDING_SCHEMA_VERSION}+${MANIFEST_SCHEMA_VERSION}${suffix(audience)}.json`,
    title: `trajwatch findings log record (finding or analysis manifest)${viewTitle(audience)}`,
    oneOf: [{ $ref: '#/$defs/finding' }, { $ref: '#/$defs/analysis_manifest' }],
    $defs: defs,
  };
}
