import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { ConfigError } from '../errors.ts';
import { deprecationNote } from './deprecated.ts';
import type { ConfigPath, RawConfig } from './raw-config.ts';
import { parseYamlConfig } from './yaml.ts';

export type { ConfigPath, RawConfig } from './raw-config.ts';

/** Overrides from the environment, applied over the file and under command-line flags. */
export const ENV_OVERRIDES: Readonly<Record<string, readonly string[]>> = {
  TRAJWATCH_DATA_DIR: ['dataDir'],
  TRAJWATCH_OTLP_HTTP: ['receiver', 'otlpHttp'],
  TRAJWATCH_OTLP_GRPC: ['receiver', 'otlpGrpc'],
  TRAJWATCH_LOG_LEVEL: ['log', 'level'],
};

/** Overrides whose value is a comma-separated list; each name says which side it sets. */
export const ENV_LIST_OVERRIDES: Readonly<Record<string, readonly string[]>> = {
  TRAJWATCH_SINK_KAFKA_BROKERS: ['sinks', 'kafka', 'brokers'],
  TRAJWATCH_SOURCE_KAFKA_BROKERS: ['source', 'kafka', 'brokers'],
};

/** Old variable names still read (under the new name, which wins when both are set), with one warning. */
export const DEPRECATED_ENV: Readonly<Record<string, string>> = {
  TRAJWATCH_KAFKA_BROKERS: 'TRAJWATCH_SINK_KAFKA_BROKERS',
};

/** Whether `path` is read as YAML: by its extension, `.yaml` or `.yml`; anything else is JSON. */
export const isYamlPath = (path: string): boolean => ['.yaml', '.yml'].includes(extname(path).toLowerCase());

/** Reads a configuration file: YAML for `.yaml`/`.yml`, else JSON. Both give the same raw object for the same schema. */
export async function readConfigFile(path: string): Promise<RawConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`cannot read the config file: ${(err as Error).message}`], path);
  }
  if (isYamlPath(path)) return parseYamlConfig(text, path);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError([`not valid JSON: ${(err as Error).message}`], path);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError([`(root): expected a JSON object, got ${JSON.stringify(value)}`], path);
  }
  return { value: value as Record<string, unknown>, source: path };
}

/** Sets `path` in a nested raw object, creating objects on the way. */
export function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path.at(-1)!] = value;
}

/** A value set over the file: its key path, and where it came from (`env TRAJWATCH_DATA_DIR`, `--data-dir`). */
export interface Override {
  path: readonly string[];
  origin: string;
}

/**
 * Applies the environment overrides to `raw`; returns what it set (those values no longer come
 * from the file). A deprecated name (`DEPRECATED_ENV`) set is read as its new one, unless that
 * is set too, and `onDeprecated` is told once.
 */
export function applyEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, onDeprecated: (note: string) => void = () => {}): Override[] {
  const set: Override[] = [];
  const aliased: { name: string; path: readonly string[] }[] = [];
  for (const [old, name] of Object.entries(DEPRECATED_ENV)) {
    if (env[old] === undefined || env[old] === '') continue;
    onDeprecated(deprecationNote(`the variable ${old}`, name));
    if (env[name] === undefined || env[name] === '') aliased.push({ name: old, path: ENV_LIST_OVERRIDES[name]! });
  }
  for (const { name, path } of aliased) {
    setPath(
      raw,
      path,
      env[name]!.split(',').map((v) => v.trim()),
    );
    set.push({ path, origin: `env ${name}` });
  }
  for (const [name, path] of Object.entries(ENV_OVERRIDES)) {
    const value = env[name];
    if (value !== undefined && value !== '') {
      setPath(raw, path, value);
      set.push({ path, origin: `env ${name}` });
    }
  }
  for (const [name, path] of Object.entries(ENV_LIST_OVERRIDES)) {
    const value = env[name];
    if (value !== undefined && value !== '') {
      setPath(
        raw,
        path,
        value.split(',').map((v) => v.trim()),
      );
      set.push({ path, origin: `env ${name}` });
    }
  }
  return set;
}

/**
 * The source to name in a {@link ConfigError} for `issues`: the variables and flags when every
 * issue came from one (the file, or the embedded defaults, are then not where to look), else `source`.
 */
export function sourceOfIssues(issues: readonly string[], source: string): string {
  const origins = issues.map((issue) => /^[^:]*? \(from ([^)]+)\):/.exec(issue)?.[1]);
  if (origins.length === 0 || origins.some((o) => o === undefined)) return source;
  return [...new Set(origins)].join(', ');
}

/**
 * `raw` with its locator naming the origin of `overridden` paths and everything under them: an
 * error about a value set by the environment or a flag names that variable or flag, never the
 * file's line.
 */
export function withOverrides(raw: RawConfig, overridden: readonly Override[]): RawConfig {
  if (overridden.length === 0) return raw;
  const locate = raw.locate;
  const origin = (path: ConfigPath) => overridden.findLast((o) => o.path.length <= path.length && o.path.every((k, i) => String(path[i]) === k))?.origin;
  return {
    ...raw,
    locate: (path) => {
      const from = origin(path);
      return from !== undefined ? { from } : (locate?.(path) ?? undefined);
    },
  };
}
