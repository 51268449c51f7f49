import { applyEnv, readConfigFile, setPath, withOverrides } from '../config/load.ts';
import { type Config, validateConfig } from '../config-schema.ts';

/**
 * Builds the configuration: embedded defaults, then the config file (`--config`, or
 * `TRAJWATCH_CONFIG`; JSON, or YAML for `.yaml`/`.yml`), then environment overrides, then
 * command-line flags. An error names the file's line only for a value that came from the file.
 */
export async function resolveConfig(
  configPath: string | undefined,
  flags: readonly { path: readonly string[]; value: unknown }[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Config> {
  const path = configPath ?? (env.TRAJWATCH_CONFIG || undefined);
  const raw = path === undefined ? { value: {}, source: 'embedded defaults' } : await readConfigFile(path);
  const overridden = applyEnv(raw.value, env);
  for (const flag of flags) {
    if (flag.value === undefined) continue;
    setPath(raw.value, flag.path, flag.value);
    overridden.push(flag.path);
  }
  return validateConfig(withOverrides(raw, overridden));
}
