import { parseArgs } from 'node:util';
import { readConfigFile } from '../config/load.ts';
import { validateConfig } from '../config-schema.ts';

export const VALIDATE_CONFIG_HELP = `Usage: trajwatch validate-config FILE

Checks a configuration file (JSON, or YAML when it ends in .yaml or .yml) against the
schema and prints every error at once, each naming its key and the bad value (and, for YAML,
its line). Unknown keys are errors. Exit 0 when valid, 1 otherwise.
`;

export async function validateConfigCommand(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { help: { type: 'boolean' } } });
  if (values.help === true) {
    process.stdout.write(VALIDATE_CONFIG_HELP);
    return 0;
  }
  if (positionals.length !== 1) {
    process.stderr.write(`validate-config: expected exactly one FILE\n\n${VALIDATE_CONFIG_HELP}`);
    return 2;
  }
  const file = positionals[0]!;
  validateConfig(await readConfigFile(file));
  process.stdout.write(`${file}: valid\n`);
  return 0;
}
