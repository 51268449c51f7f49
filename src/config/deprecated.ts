import { ConfigError } from '../errors.ts';
import type { ConfigPath, RawConfig } from './raw-config.ts';

/** A key kept readable under an old name: the value at `from` is read as if it stood at `to`. */
export interface KeyAlias {
  from: readonly string[];
  to: readonly string[];
}

/** The one line a deprecated name gets (a key, a variable, a flag), naming the one to use. */
export function deprecationNote(old: string, use: string): string {
  return `${old} is deprecated: use ${use} (the old name still works)`;
}

/** Where deprecation notes go by default: one line each on stderr. */
export function warnOnStderr(note: string): void {
  process.stderr.write(`trajwatch: warning: ${note}\n`);
}

const valueAt = (value: Record<string, unknown>, path: readonly string[]): unknown =>
  path.reduce<unknown>(
    (node, key) => (node !== null && typeof node === 'object' && !Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined),
    value,
  );

/**
 * `raw` with every old key moved to its new place (objects on the way copied, never the
 * caller's changed), one note per old key used; the locator still names the old key's line.
 * Both set is an error: which one was meant is not guessed.
 *
 * @throws ConfigError naming both keys.
 */
export function applyKeyAliases(raw: RawConfig, aliases: readonly KeyAlias[], onDeprecated: (note: string) => void): RawConfig {
  const used = aliases.filter((a) => valueAt(raw.value, a.from) !== undefined);
  if (used.length === 0) return raw;
  const both = used.filter((a) => valueAt(raw.value, a.to) !== undefined);
  if (both.length > 0)
    throw new ConfigError(
      both.map((a) => `${a.from.join('.')}: set together with ${a.to.join('.')}; keep ${a.to.join('.')} only`),
      raw.source,
    );
  const value = { ...raw.value };
  for (const alias of used) {
    let node = value;
    for (const key of alias.to.slice(0, -1)) {
      const next = node[key];
      node = node[key] = next !== null && typeof next === 'object' && !Array.isArray(next) ? { ...(next as Record<string, unknown>) } : {};
    }
    node[alias.to.at(-1)!] = valueAt(raw.value, alias.from);
    removeAt(value, alias.from);
    onDeprecated(deprecationNote(`the key ${alias.from.join('.')}`, alias.to.join('.')));
  }
  const locate = raw.locate;
  const renamed = (path: ConfigPath): ConfigPath => {
    const alias = used.find((a) => a.to.length <= path.length && a.to.every((k, i) => String(path[i]) === k));
    return alias === undefined ? path : [...alias.from, ...path.slice(alias.to.length)];
  };
  return { ...raw, value, ...(locate === undefined ? {} : { locate: (path: ConfigPath) => locate(renamed(path)) }) };
}

function removeAt(value: Record<string, unknown>, path: readonly string[]): void {
  let node = value;
  for (const key of path.slice(0, -1)) {
    const next = { ...(node[key] as Record<string, unknown>) };
    node[key] = next;
    node = next;
  }
  delete node[path.at(-1)!];
}
