import { z } from 'zod';
import { AnalysisManifestSchema, MANIFEST_SCHEMA_VERSION } from './manifest-schema.ts';
import { FINDING_SCHEMA_VERSION, FindingSchema } from './schema.ts';

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;
}

/**
 * The finding schema as JSON Schema (draft 2020-12), for consumers in other languages;
 * `trajwatch schema finding` prints it.
 */
export function findingJsonSchema(): Record<string, unknown> {
  return {
    ...toJsonSchema(FindingSchema),
    $id: `https://trajwatch.dev/schemas/finding-${FINDING_SCHEMA_VERSION}.json`,
    title: `trajwatch finding ${FINDING_SCHEMA_VERSION}`,
  };
}

/** The analysis manifest as JSON Schema; `trajwatch schema manifest` prints it. */
export function manifestJsonSchema(): Record<string, unknown> {
  return {
    ...toJsonSchema(AnalysisManifestSchema),
    $id: `https://trajwatch.dev/schemas/analysis-manifest-${MANIFEST_SCHEMA_VERSION}.json`,
    title: `trajwatch analysis manifest ${MANIFEST_SCHEMA_VERSION}`,
  };
}

/**
 * One line of the findings log (one message of the findings topic): exactly one of a finding
 * or an analysis manifest. They cannot be confused: a manifest requires `record_kind`, which a
 * finding may not carry. `trajwatch schema record` prints it.
 */
export function recordJsonSchema(): Record<string, unknown> {
  // Each part's own `$defs` (zod's `#/$defs/__schema0` for JSON values) move to the root, where
  // their `#/$defs/...` references resolve.
  const defs: Record<string, unknown> = {};
  const part = (name: string, schema: z.ZodType) => {
    const { $schema: _draft, $defs, ...rest } = toJsonSchema(schema);
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
    $id: `https://trajwatch.dev/schemas/findings-record-${FINDING_SCHEMA_VERSION}+${MANIFEST_SCHEMA_VERSION}.json`,
    title: 'trajwatch findings log record (finding or analysis manifest)',
    oneOf: [{ $ref: '#/$defs/finding' }, { $ref: '#/$defs/analysis_manifest' }],
    $defs: defs,
  };
}
