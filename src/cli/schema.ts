import { parseArgs } from 'node:util';
import { findingJsonSchema } from '../findings/json-schema.ts';

export const SCHEMA_HELP = `Usage: trajwatch schema finding

Prints the JSON Schema (draft 2020-12) of a finding (schema version 1.1.0), for consumers
in other languages.
`;

const SCHEMAS: Record<string, () => unknown> = { finding: findingJsonSchema };

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
