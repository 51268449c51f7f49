import { readConfigFile } from '../config/load.ts';
import { validateConfig } from '../config-schema.ts';
import { parseFlags } from './flags.ts';

export const VALIDATE_CONFIG_HELP = `Usage: trajwatch validate-config FILE

Checks a configuration file (JSON, or YAML when it ends in .yaml or .yml) against the
schema and prints every error at once, each naming its key and the bad value (and, for YAML,
its line). Unknown keys are errors. Exit 0 when valid, 1 otherwise.
`;

export async function validateConfigCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, VALIDATE_CONFIG_HELP, { positionals: true });
  if (flags === undefined) return 0;
  const { positionals } = flags;
  if (positionals.length !== 1) {
    process.stderr.write(`validate-config: expected exactly one FILE\n\n${VALIDATE_CONFIG_HELP}`);
    return 2;
  }
  const file = positionals[0]!;
  validateConfig(await readConfigFile(file));
  process.stdout.write(`${file}: valid\n`);
  return 0;
}
