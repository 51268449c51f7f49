import { applyEnv, readConfigFile, setPath, sourceOfIssues, withOverrides } from '../config/load.ts';
import { ConfigError } from '../errors.ts';
import { applyKeyAliases, deprecationNote, warnOnStderr } from '../config/deprecated.ts';
import { CONFIG_KEY_ALIASES, type Config, validateConfig } from '../config-schema.ts';

/**
 * Builds the configuration: embedded defaults, then the config file (`--config`, or
 * `TRAJWATCH_CONFIG`; JSON, or YAML for `.yaml`/`.yml`), then environment overrides, then
 * command-line flags. An error names the file's line for a value that came from the file, and
 * the variable or flag (`flag`, e.g. `--otlp-http`) for one that came from there. A deprecated
 * key, variable or flag (`deprecatedFor`: the flag to use) still works, with one warning on stderr.
 */
export async function resolveConfig(
  configPath: string | undefined,
  flags: readonly { path: readonly string[]; value: unknown; flag?: string; deprecatedFor?: string }[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Config> {
  const path = configPath ?? (env.TRAJWATCH_CONFIG || undefined);
  // Old keys move to their new place before the environment and flags set the new ones.
  const raw = path === undefined ? { value: {}, source: 'embedded defaults' } : applyKeyAliases(await readConfigFile(path), CONFIG_KEY_ALIASES, warnOnStderr);
  const overridden = applyEnv(raw.value, env, warnOnStderr);
  for (const flag of flags) {
    if (flag.value === undefined) continue;
    if (flag.deprecatedFor !== undefined) warnOnStderr(deprecationNote(`the flag ${flag.flag}`, flag.deprecatedFor));
    setPath(raw.value, flag.path, flag.value);
    overridden.push({ path: flag.path, origin: flag.flag ?? 'a command-line flag' });
  }
  try {
    return validateConfig(withOverrides(raw, overridden));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(err.issues, sourceOfIssues(err.issues, raw.source));
  }
}
