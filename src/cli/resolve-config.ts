import { applyEnv, readConfigFile, setPath } from '../config/load.ts';
import { type Config, validateConfig } from '../config-schema.ts';

/**
 * Builds the configuration: embedded defaults, then the config file (`--config`, or
 * `TRAJWATCH_CONFIG`), then environment overrides, then command-line flags.
 */
export async function resolveConfig(
  configPath: string | undefined,
  flags: readonly { path: readonly string[]; value: unknown }[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Config> {
  const path = configPath ?? (env.TRAJWATCH_CONFIG || undefined);
  const raw = path === undefined ? { value: {}, source: 'embedded defaults' } : await readConfigFile(path);
  applyEnv(raw.value, env);
  for (const flag of flags) if (flag.value !== undefined) setPath(raw.value, flag.path, flag.value);
  return validateConfig(raw);
}
