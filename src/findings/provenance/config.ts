import { parseSection } from '../../config/parse-section.ts';
import { z } from 'zod';
import { EvidenceRefSchema } from '../../core/evidence-ref.ts';
import { TREATMENT_LAYERS } from './treatment.ts';

const attrNames = z.array(z.string().min(1));
const Scalar = z.union([z.string(), z.number(), z.boolean()]);

/**
 * One treatment bundle from the treatments file. It applies to a trajectory when some step
 * carries every `match` entry, read from the span attributes, then the resource attributes.
 * Scalars compare by their string form, because many emitters send every value as a string.
 */
export const TreatmentRuleSchema = z
  .object({
    id: z.string().min(1),
    match: z.record(z.string().min(1), Scalar).refine((m) => Object.keys(m).length > 0, {
      message: 'match needs at least one attribute (an empty match would apply to every trajectory)',
    }),
    layers: z.array(z.enum(TREATMENT_LAYERS)).min(1),
    /** The bundle's definition; its canonical digest becomes `definition_digest`. */
    definition: z.json(),
    definition_refs: z.array(EvidenceRefSchema).default([]),
  })
  .strict();

export type TreatmentRule = z.infer<typeof TreatmentRuleSchema>;

export const TreatmentsConfigSchema = z
  .object({
    bundles: z.array(TreatmentRuleSchema).default([]),
    /**
     * Read bundles declared on the telemetry under `<attributePrefix>.id`, `.layers`,
     * `.definition`, `.definition_digest`, `.definition_refs` (see README).
     */
    fromAttributes: z.boolean().default(true),
    attributePrefix: z.string().min(1).default('trajwatch.treatment'),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const seen = new Set<string>();
    cfg.bundles.forEach((b, i) => {
      if (seen.has(b.id)) ctx.addIssue({ code: 'custom', path: ['bundles', i, 'id'], message: `duplicate bundle id "${b.id}"` });
      seen.add(b.id);
    });
  });

/** Attribute names each reading is taken from, first present wins (span attributes, then resource). */
export const ConditionsConfigSchema = z
  .object({
    /** false: conditions are not captured at all and every finding says `conditions: null`. */
    enabled: z.boolean().default(true),
    runtimeVersionAttributes: attrNames.default(['service.version']),
    labCommitAttributes: attrNames.default(['trajwatch.lab_commit', 'vcs.ref.head.revision']),
    modelVersionAttributes: attrNames.default(['gen_ai.response.model']),
    providerNameAttributes: attrNames.default(['gen_ai.provider.name', 'gen_ai.system']),
    providerVersionAttributes: attrNames.default(['trajwatch.provider_version']),
    seatAttributes: attrNames.default(['trajwatch.seat']),
    hostLoadAttributes: attrNames.default(['trajwatch.host_load']),
    steers: z
      .object({
        /** Only a captured channel can report "none observed"; otherwise steers are null. */
        captured: z.boolean().default(false),
        eventNames: attrNames.default(['operator.steer']),
      })
      .strict()
      .default({ captured: false, eventNames: ['operator.steer'] }),
  })
  .strict();

export const ProvenanceConfigSchema = z
  .object({
    treatments: TreatmentsConfigSchema.default({ bundles: [], fromAttributes: true, attributePrefix: 'trajwatch.treatment' }),
    conditions: ConditionsConfigSchema.default(() => ConditionsConfigSchema.parse({})),
  })
  .strict();

export type ProvenanceConfig = z.infer<typeof ProvenanceConfigSchema>;
export type ConditionsConfig = z.infer<typeof ConditionsConfigSchema>;
export type TreatmentsConfig = z.infer<typeof TreatmentsConfigSchema>;

/** Every default: no treatments file, telemetry-declared bundles read, steers not captured. */
export const DEFAULT_PROVENANCE_CONFIG: ProvenanceConfig = ProvenanceConfigSchema.parse({});

/**
 * Validate a provenance config, collecting every problem; throws `ConfigError` naming each
 * key and bad value (configuration is checked once, at start).
 */
export function parseProvenanceConfig(raw: unknown, source = 'provenance config'): ProvenanceConfig {
  return parseSection(ProvenanceConfigSchema, raw, source);
}
