import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.ts';

/** Overrides from the environment, applied over the file and under command-line flags. */
export const ENV_OVERRIDES: Readonly<Record<string, readonly string[]>> = {
  TRAJWATCH_DATA_DIR: ['dataDir'],
  TRAJWATCH_OTLP_HTTP: ['receiver', 'otlpHttp'],
  TRAJWATCH_OTLP_GRPC: ['receiver', 'otlpGrpc'],
  TRAJWATCH_LOG_LEVEL: ['log', 'level'],
};

/** Overrides whose value is a comma-separated list. */
export const ENV_LIST_OVERRIDES: Readonly<Record<string, readonly string[]>> = {
  TRAJWATCH_KAFKA_BROKERS: ['kafka', 'brokers'],
};

/** A raw (unvalidated) configuration object and where it came from. */
export interface RawConfig {
  value: Record<string, unknown>;
  source: string;
}

export async function readConfigFile(path: string): Promise<RawConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`cannot read the config file: ${(err as Error).message}`], path);
  }
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

export function applyEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  for (const [name, path] of Object.entries(ENV_OVERRIDES)) {
    const value = env[name];
    if (value !== undefined && value !== '') setPath(raw, path, value);
  }
  for (const [name, path] of Object.entries(ENV_LIST_OVERRIDES)) {
    const value = env[name];
    if (value !== undefined && value !== '') setPath(raw, path, value.split(',').map((v) => v.trim()));
  }
}
