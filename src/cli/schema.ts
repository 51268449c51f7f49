import { parseArgs } from 'node:util';
import { findingJsonSchema, manifestJsonSchema, recordJsonSchema } from '../findings/json-schema.ts';

export const SCHEMA_HELP = `Usage: trajwatch schema finding|manifest|record

Prints a JSON Schema (draft 2020-12), for consumers in other languages:
  finding   a finding (schema version 1.1.0)
  manifest  the analysis manifest of one closed trajectory revision (record_kind
            "analysis-manifest", schema version 1.0.0): each check's status, each window's fate
  record    one line of findings.jsonl / one message of the findings topic: oneOf the two
            (a manifest has record_kind, and the Kafka header record_kind; a finding has neither)
`;

const SCHEMAS: Record<string, () => unknown> = { finding: findingJsonSchema, manifest: manifestJsonSchema, record: recordJsonSchema };

export async function schemaCommand(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { help: { type: 'boolean' } } });
  if (values.help === true) {
    process.stdout.write(SCHEMA_HELP);
    return 0;
  }
  const make = positionals.length === 1 ? SCHEMAS[positionals[0]!] : undefined;
  if (make === undefined) {
    process.stderr.write(`schema: expected one of ${Object.keys(SCHEMAS).join(', ')}\n\n${SCHEMA_HELP}`);
    return 2;
  }
  process.stdout.write(`${JSON.stringify(make(), null, 2)}\n`);
  return 0;
}
