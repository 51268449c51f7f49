import { UsageError } from '../errors.ts';
import { AUDIENCES, type Audience } from '../findings/audience.ts';
import { findingJsonSchema, manifestJsonSchema, recordJsonSchema, recordValuesJsonSchema } from '../findings/json-schema.ts';
import { RECORD_OBSERVATION_NAMES } from '../findings/record-values.ts';
import { parseFlags } from './flags.ts';

export const SCHEMA_HELP = `Usage: trajwatch schema finding|manifest|record|<observation> [--audience internal|external]

Prints a JSON Schema (draft 2020-12), for consumers in other languages:
  finding         a finding (schema version 1.1.0)
  manifest        the analysis manifest of one closed trajectory revision (record_kind
                  "analysis-manifest", schema version 1.0.0): each check's status, each window's fate;
                  its capture_states lists every capture state (incomplete reasons, capture gap
                  kinds) and which checks each silences, from the check registry
  record          one line of findings.jsonl / one message of the findings topic: oneOf the two
                  (a manifest has record_kind, and the Kafka header record_kind; a finding has neither)
  <observation>   the values of a record observation, by its observation.name: ${RECORD_OBSERVATION_NAMES.join(', ')}
                  (trace-question: a trace question's answer; layer-question, layered-walk,
                  layer-conflict: the layered walk's answers, summary and conflicts)

Options:
  --audience internal|external
                  the view (default internal: everything). external: without run internals and
                  methodology (model ids, receipts, ledger keys, certificate ids, window-policy
                  digests); fields marked "audience": "internal" in the internal view are the ones
                  an external view leaves out (docs/consumers.md)
`;

const SCHEMAS: Record<string, (audience: Audience) => unknown> = {
  finding: findingJsonSchema,
  manifest: manifestJsonSchema,
  record: recordJsonSchema,
  ...Object.fromEntries(RECORD_OBSERVATION_NAMES.map((name) => [name, (audience: Audience) => recordValuesJsonSchema(name, audience)])),
};

export async function schemaCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, SCHEMA_HELP, { strings: ['audience'], positionals: true });
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  const audience = parseAudience(values.audience);
  const make = positionals.length === 1 ? SCHEMAS[positionals[0]!] : undefined;
  if (make === undefined) {
    process.stderr.write(`schema: expected one of ${Object.keys(SCHEMAS).join(', ')}\n\n${SCHEMA_HELP}`);
    return 2;
  }
  process.stdout.write(`${JSON.stringify(make(audience), null, 2)}\n`);
  return 0;
}

/** `--audience`: internal (default) or external. */
export function parseAudience(value: string | undefined): Audience {
  if (value === undefined) return 'internal';
  if (!(AUDIENCES as readonly string[]).includes(value)) {
    throw new UsageError(`--audience: expected internal or external, got "${value}"`);
  }
  return value as Audience;
}
